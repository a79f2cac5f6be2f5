/** A count for a person to read: Indian digit grouping and the noun in its number ("1 batch",
 * "1,20,000 payouts"). Pure. */
export const countOf = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-IN')} ${n === 1 ? one : many}`;
