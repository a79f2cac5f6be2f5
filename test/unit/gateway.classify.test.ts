/** The adapter's pure parts: the one failure classifier, signatures, and the base URL rule. */
import { createHmac } from 'node:crypto';
import { classifyFailure, ProviderContractError, validatePaymentSignature, validateWebhookSignature } from '../../src/gateway';
import { sdkHostUrl } from '../../src/gateway/sdkClient';

const sdkError = (statusCode: number | undefined, error?: unknown) => ({ statusCode, error });
const providerError = { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', description: 'Account does not have sufficient balance to carry out transfer operation', field: 'amount', reason: 'insufficient_account_balance', step: 'transfer_processing', source: 'business', metadata: {} };
const sdkTypeError = new TypeError("Cannot read properties of undefined (reading 'status')");

describe('classifyFailure', () => {
  test('when a 4xx carries a provider code, then it is rejected with code, description, field, reason, step and source', () => {
    expect(classifyFailure(sdkError(400, providerError), null)).toEqual({
      type: 'rejected', httpStatus: 400,
      error: { code: providerError.code, description: providerError.description, field: 'amount', reason: 'insufficient_account_balance', step: 'transfer_processing', source: 'business' },
    });
  });

  test('when a 4xx has no provider code, then it throws: a rejection without a code is a bug', () => {
    expect(() => classifyFailure(sdkError(400, { description: 'x' }), null)).toThrow(ProviderContractError);
    expect(() => classifyFailure(sdkError(404, undefined), null)).toThrow(ProviderContractError);
  });

  test.each([
    [500, 'server_error'], [502, 'server_error'], [504, 'server_error'], [429, 'rate_limited'], [409, 'in_progress'],
  ])('when the status is %i, then the outcome is unknown/%s', (status, reason) => {
    expect(classifyFailure(sdkError(status, status === 502 ? undefined : providerError), null)).toMatchObject({ type: 'unknown', reason, httpStatus: status });
  });

  test('when the SDK reports no status at all (older builds), then the outcome is unknown/no_response', () => {
    expect(classifyFailure(sdkError(undefined), null)).toMatchObject({ type: 'unknown', reason: 'no_response', httpStatus: null });
  });

  test.each([
    [{ code: 'ECONNABORTED', message: 'timeout of 400ms exceeded' }, 'timeout'],
    [{ code: 'ETIMEDOUT', message: 'connect ETIMEDOUT' }, 'timeout'],
    [{ code: 'ECONNRESET', message: 'socket hang up' }, 'connection'],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }, 'connection'],
    [{ code: null, message: 'something else' }, 'no_response'],
  ])('when the SDK normaliser crashed and the transport saw %o, then the outcome is unknown/%s', (transport, reason) => {
    expect(classifyFailure(sdkTypeError, transport)).toMatchObject({ type: 'unknown', reason, httpStatus: null });
  });

  test('when the SDK normaliser crashed and nothing else is known, then the outcome is unknown/no_response', () => {
    expect(classifyFailure(sdkTypeError, null)).toMatchObject({ type: 'unknown', reason: 'no_response', detail: sdkTypeError.message });
  });

  test('when the failure is our own error (not a provider answer), then it is rethrown', () => {
    const ours = new Error('`payment_id` is mandatory');
    expect(() => classifyFailure(ours, null)).toThrow(ours);
  });
});

describe('signatures', () => {
  const body = '{"entity":"event","event":"payment.captured"}';
  const secret = 'webhook_secret_1';
  const signature = createHmac('sha256', secret).update(body).digest('hex');

  test('when the webhook body and secret match, then the signature verifies, as a string or a Buffer', () => {
    expect(validateWebhookSignature(body, signature, secret)).toBe(true);
    expect(validateWebhookSignature(Buffer.from(body), signature, secret)).toBe(true);
  });

  test('when the body, the secret or the signature differ, or the signature is empty, then it does not verify', () => {
    expect(validateWebhookSignature(`${body} `, signature, secret)).toBe(false);
    expect(validateWebhookSignature(body, signature, 'other_secret')).toBe(false);
    expect(validateWebhookSignature(body, signature.slice(0, -1), secret)).toBe(false);
    expect(validateWebhookSignature(body, '', secret)).toBe(false);
  });

  test('when the checkout callback signs order_id|payment_id with the key secret, then it verifies; a swapped pair does not', () => {
    const sig = createHmac('sha256', 'key_secret').update('order_A|pay_B').digest('hex');
    expect(validatePaymentSignature({ orderId: 'order_A', paymentId: 'pay_B', signature: sig }, 'key_secret')).toBe(true);
    expect(validatePaymentSignature({ orderId: 'pay_B', paymentId: 'order_A', signature: sig }, 'key_secret')).toBe(false);
  });
});

test('when a base URL ends in /v1 or a slash, then the SDK host is the root (the SDK adds /v1 itself)', () => {
  expect(sdkHostUrl('http://127.0.0.1:4010')).toBe('http://127.0.0.1:4010');
  expect(sdkHostUrl('http://127.0.0.1:4010/v1/')).toBe('http://127.0.0.1:4010');
  expect(sdkHostUrl('https://api.razorpay.com/v1')).toBe('https://api.razorpay.com');
});
