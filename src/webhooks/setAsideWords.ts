/** Why a signed webhook was set aside, in words ops can act on, from its reason and the problem
 * recorded with it (the parse issues, or the age against the replay window). Pure. */
import { formatAge } from '../domain/durationWords';
import type { SetAsideReason } from './setAsideReason';

interface Issue { path?: unknown; message?: unknown }

const issuesOf = (problem: Record<string, unknown>): string[] => (Array.isArray(problem.issues) ? problem.issues as Issue[] : [])
  .slice(0, 3)
  .map((i) => `${Array.isArray(i.path) && i.path.length ? i.path.join('.') : 'the body'}: ${typeof i.message === 'string' ? i.message : 'refused'}`);

const seconds = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.abs(Math.round(v)) : null);

export function setAsideWords(reason: SetAsideReason, problem: Record<string, unknown>): string {
  if (reason === 'schema_refused') {
    const issues = issuesOf(problem);
    return `Our schema refused the body${issues.length ? ` (${issues.join('; ')})` : ''}: Razorpay may have changed the payload; our schema needs a look.`;
  }
  const age = seconds(problem.ageSeconds), max = seconds(problem.maxAgeSeconds), skew = seconds(problem.clockSkewSeconds);
  if (reason === 'too_old') {
    return `Older than the replay window: sent ${age === null ? 'long' : formatAge(age)} before it arrived${max === null ? '' : `, past the ${formatAge(max)} Razorpay retries for`}. A replay, or a delivery held up for a day.`;
  }
  return `Dated ahead of our clock${age === null ? '' : ` by ${formatAge(age)}`}${skew === null ? '' : `, more than the ${formatAge(skew)} of skew allowed`}: check this host's clock (NTP), or a replay with a forged date.`;
}
