// Reading a /metrics answer as Prometheus would (text exposition format 0.0.4): samples with their
// name, labels and value, and the families' TYPE declarations, so tests assert on exact series
// rather than grepping the text.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → its TYPE, one entry per `# TYPE` line (a family declared twice shows twice). */
  types: Array<[string, string]>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types: Array<[string, string]> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const [, keyword, name, type] = line.split(/\s+/);
      if (keyword === 'TYPE') types.push([name, type]);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (!label) throw new Error(`bad labels in: ${line}`);
      labels[label[1]] = label[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const raw = match[3];
    // Prometheus reads floats as Go's ParseFloat does: NaN in any case (prom-client writes `Nan`).
    const value = /^nan$/i.test(raw) ? NaN : raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && !/^nan$/i.test(raw)) throw new Error(`bad value in: ${line}`);
    samples.push({ name: match[1], labels, value });
  }
  return { samples, types };
}

/** GET `url` (a /metrics address) and parse it; fails unless 200 with the Prometheus text type. */
export async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`${url} answered ${type}`);
  return parseExposition(await response.text());
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Whether any sample is named `name` with (at least) `labels`. */
export function hasSeries(exposition: Exposition, name: string, labels: Record<string, string> = {}): boolean {
  return exposition.samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
