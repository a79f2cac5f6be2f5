/** The Unix second Razorpay made a payment (`alias` is a `payments` row): its stored payload's
 * `created_at`, the clock the payment listing's `from` and `to` count in; NULL when the payload has
 * none. The CASE guards the cast whatever order PostgreSQL evaluates a query's conditions in. */
export const paymentCreatedSecondsSql = (alias: string): string =>
  `(CASE WHEN ${alias}.raw->>'created_at' ~ '^[0-9]{1,12}$' THEN (${alias}.raw->>'created_at')::bigint END)`;
