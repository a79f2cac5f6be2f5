/** How the CLI writes: for a person on a terminal, aligned columns and IST times; for a pipe or a
 * file, plain lines (a header, then tab-separated fields, ISO times at +05:30) that `cut` and `awk` read. */
import { formatIst, isoIst } from '../../domain/istTime';

export type Cell = string | number | boolean | null | undefined;

export interface Style {
  /** stdout is a terminal. */
  tty: boolean;
}

const plainCell = (cell: Cell): string => (cell === null || cell === undefined ? '' : String(cell).replace(/[\t\r\n]+/g, ' '));

/** Header and rows as lines: padded columns on a terminal, tab-separated otherwise. */
export function renderTable(header: readonly string[], rows: readonly Cell[][], style: Style): string[] {
  const cells = [header.map(plainCell), ...rows.map((r) => r.map(plainCell))];
  if (!style.tty) return cells.map((r) => r.join('\t'));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

/** 45s, 12m, 3h 05m, 2d 4h: how long something has waited. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3_600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h ${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3_600)}h`;
}

/** An instant for a person (IST wall clock, to the minute) or for a pipe (ISO with IST's offset). */
export function formatInstant(iso: string | null | undefined, style: Style): string {
  if (!iso) return '';
  return style.tty ? formatIst(iso, { seconds: false }) : isoIst(iso) ?? '';
}

/** The shell-quoted form of an argument, for commands printed for a person to paste. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function writeLines(lines: readonly string[], stream: NodeJS.WriteStream = process.stdout): void {
  if (lines.length > 0) stream.write(`${lines.join('\n')}\n`);
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
