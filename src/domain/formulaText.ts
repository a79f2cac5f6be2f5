/** Text a spreadsheet would run as a formula when it opens a finance file (issue 41): a cell that
 * starts with `=`, `+`, `-`, `@`, a tab or a carriage return. The one rule every boundary that
 * takes an id or a name (src/domain/schemas.ts: csvSafe) and every CSV writer (src/reports/csv.ts)
 * apply. Pure and free of zod, so the writers need nothing else. */
export const FORMULA_START = /^[=+\-@\t\r]/;

export const startsLikeFormula = (value: string): boolean => FORMULA_START.test(value);

export const FORMULA_START_MESSAGE = 'must not start with =, +, -, @, a tab or a carriage return (a spreadsheet opening a finance file would run it as a formula)';
