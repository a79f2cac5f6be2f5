/** Durations for a person to read. Pure. */

/** "3 d 4 h", "2 h 5 min", "40 s": how long something has waited or will take. */
export function formatAge(seconds: number): string {
  const d = Math.floor(seconds / 86_400), h = Math.floor((seconds % 86_400) / 3_600), m = Math.floor((seconds % 3_600) / 60);
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min`;
  return `${seconds} s`;
}
