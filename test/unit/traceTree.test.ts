import { spanTree, type TraceSpan } from '../../src/observability/traceStore';

const span = (spanId: string, parentId: string | null, startUs: number): TraceSpan => ({ spanId, parentId, name: spanId, service: 'payouts', startUs, durationUs: 1, error: false, ids: {} });

describe('a trace drawn as a tree', () => {
  test('each span comes after its parent, siblings by start, with its depth', () => {
    const tree = spanTree([span('run', 'start', 30), span('claim', 'run', 40), span('request', null, 0), span('start', 'request', 10), span('send', 'run', 35)]);
    expect(tree.map((s) => [s.name, s.depth])).toEqual([['request', 0], ['start', 1], ['run', 2], ['send', 3], ['claim', 3]]);
  });

  test('a span whose parent the store does not hold is a root of its own, not lost', () => {
    expect(spanTree([span('orphan', 'gone', 5), span('root', null, 0)]).map((s) => [s.name, s.depth])).toEqual([['root', 0], ['orphan', 0]]);
  });
});
