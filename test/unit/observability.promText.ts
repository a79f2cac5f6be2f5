/** A strict reader of the Prometheus text exposition format (0.0.4), for the metrics tests: every
 * sample must belong to a family declared by a `# TYPE` line before it, each family is declared
 * once, and names, labels and values must be well formed. Throws on the first bad line. */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
export interface Sample { name: string; labels: Record<string, string>; value: number }
export interface Family { name: string; type: MetricType; help?: string; samples: Sample[] }

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SUFFIXES: Record<MetricType, string[]> = {
  counter: ['_total', '_created', ''],
  gauge: [''],
  histogram: ['_bucket', '_sum', '_count', '_created'],
  summary: ['_sum', '_count', '_created', ''],
  untyped: [''],
};

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text.trim();
  while (rest.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,\s*)?/.exec(rest);
    if (!m) throw new Error(`bad labels in: ${line}`);
    if (m[1]! in labels) throw new Error(`label ${m[1]} twice in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    rest = rest.slice(m[0].length);
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  // As Go's ParseFloat reads them (prom-client writes NaN as `Nan`).
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`bad value in: ${line}`);
  return v;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (kind === 'HELP') { helps.set(name, rest); continue; }
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`bad type in: ${line}`);
      if (families.has(name)) throw new Error(`family ${name} declared twice`);
      families.set(name, { name, type: rest as MetricType, help: helps.get(name), samples: [] });
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const family = [...families.values()].find((f) => SUFFIXES[f.type].some((s) => `${f.name}${s}` === name));
    if (!family) throw new Error(`sample ${name} has no # TYPE line before it`);
    family.samples.push({ name, labels: labelText ? parseLabels(labelText, line) : {}, value: parseValue(valueText, line) });
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when absent. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}

/** The provider backlog's series of a scrape as one object, so a test states them in one expectation. */
export function backlogSeriesOf(families: Map<string, Family>): Record<string, number | undefined> {
  const backlog = (cls: string, state: string) => sampleValue(families, 'payouts_backlog', { class: cls, state });
  return {
    writeDue: backlog('write', 'due'), writeClaimed: backlog('write', 'claimed'), writeInFlight: backlog('write', 'in_flight'),
    readUnknown: backlog('read', 'unknown'), readAwaitingSettlement: backlog('read', 'awaiting_settlement'),
    etaSeconds: sampleValue(families, 'payouts_backlog_eta_seconds'), etaAlertSeconds: sampleValue(families, 'payouts_backlog_eta_alert_seconds'),
    writeRps: sampleValue(families, 'payouts_provider_budget_rps', { class: 'write' }), readRps: sampleValue(families, 'payouts_provider_budget_rps', { class: 'read' }),
    wallUp: sampleValue(families, 'payouts_balance_wall_up'), wallNeededPaise: sampleValue(families, 'payouts_balance_wall_needed_paise'),
  };
}
