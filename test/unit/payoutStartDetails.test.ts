import { payoutStartDetails } from '../../src/contracts/payoutText';

describe("a payout run's static details name its trace", () => {
  test('with the trace store UI and the console configured, both are links', () => {
    expect(payoutStartDetails('ord_1', 'abc123', { tracesUiUrl: 'http://localhost:16686/', consoleUrl: 'https://payouts.example' }))
      .toBe("Payout of order ord_1: see the current details for its state and next step.\n\nIts trace: [trace abc123](http://localhost:16686/trace/abc123) · [the console's payout page](https://payouts.example/console/payouts/ord_1#trace).");
  });

  test('without links the trace id is named; without a trace, the tag to search by', () => {
    expect(payoutStartDetails('ord_1', 'abc123')).toMatch(/Its trace: trace abc123\.$/);
    expect(payoutStartDetails('ord_1', null)).toMatch(/Its trace: spans tagged payouts\.order_id = ord_1\.$/);
  });
});
