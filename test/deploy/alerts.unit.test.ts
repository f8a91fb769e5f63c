// deploy/prometheus/alerts.yaml validated as `promtool check rules` would, offline and without a
// hand-installed tool (test/support/prometheus-rules.ts: rulefmt's structure and the Prometheus
// project's own PromQL grammar), plus our conventions (a severity, a summary), and every metric its
// expressions read checked against what the API's and the worker's /metrics serve. Inline broken
// rules show that each check fails when it should. The runbook links are checked beside the runbook
// (test/docs/runbook.unit.test.ts).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSdkMetric, servedServiceMetrics } from '../support/metric-names.js';
import { checkExpression, checkRuleFile } from '../support/prometheus-rules.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const file = checkRuleFile(readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yaml'), 'utf8'));

/** A one-group rule file around `rule` (YAML lines of one rule, made an item of the group's list). */
function ruleFile(rule: string): string {
  const item = rule.split('\n').map((line, i) => (i === 0 ? `      - ${line}` : `        ${line}`));
  return `groups:\n  - name: test\n    rules:\n${item.join('\n')}\n`;
}

/** Prometheus's own target metric (`up`) and its scrape metadata series. */
const PROMETHEUS_SERIES = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);

describe('deploy/prometheus/alerts.yaml, as promtool check rules reads it', () => {
  it('has groups of rules and no problem at all: structure, durations, names, every expression parsed', () => {
    expect(file.rules.length).toBeGreaterThan(20);
    expect(file.problems).toEqual([]);
  });

  it('has uniquely named alerting rules (no recording rules), each with a severity and a summary', () => {
    expect(new Set(file.rules.map((r) => r.alert)).size).toBe(file.rules.length);
    for (const rule of file.rules) {
      expect({ alert: rule.alert, record: rule.record }).toEqual({ alert: expect.stringMatching(/^Cds[A-Za-z]+$/), record: undefined });
      expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({ alert: rule.alert, severity: expect.stringMatching(/^(critical|warning|info)$/) }); // prettier-ignore
      expect({ alert: rule.alert, summary: typeof rule.annotations?.summary }).toEqual({ alert: rule.alert, summary: 'string' });
    }
  });

  it('reads only metrics that the API or the worker serves on /metrics (or Prometheus itself: up)', () => {
    const served = servedServiceMetrics();
    const unknown = file.rules.flatMap((rule) =>
      rule.metrics
        .filter((name) => !(served.has(name) || isSdkMetric(name) || PROMETHEUS_SERIES.has(name)))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(unknown).toEqual([]);
    expect(file.rules.filter((rule) => rule.metrics.length === 0).map((rule) => rule.alert)).toEqual([]);
  });
});

describe('the checks themselves, on inline broken rules', () => {
  const good = 'alert: CdsGood\nexpr: sum(rate(cds_webhook_attempts_total{outcome!="success"}[5m])) > 1\nfor: 5m\nlabels:\n  severity: warning\nannotations:\n  summary: "{{ $value }} failing"'; // prettier-ignore

  it('passes a good rule and reads its metric', () => {
    expect(checkRuleFile(ruleFile(good))).toEqual({
      problems: [],
      rules: [expect.objectContaining({ metrics: ['cds_webhook_attempts_total'] })],
    });
  });

  it('fails a PromQL syntax error (an unclosed parenthesis, a missing operand, an unknown function)', () => {
    expect(checkExpression('sum(rate(cds_webhook_attempts_total[5m])').problems).toEqual([expect.stringMatching(/^syntax error/)]);
    expect(checkExpression('sum(rate(cds_webhook_attempts_total[5m])) >').problems).toEqual([expect.stringMatching(/^syntax error/)]);
    expect(checkExpression('rates(cds_webhook_attempts_total[5m])').problems).not.toEqual([]);
    const broken = checkRuleFile(ruleFile(good.replace('[5m])) > 1', '[5m]) > 1')));
    expect(broken.problems).toEqual([expect.stringMatching(/^test\/CdsGood: syntax error/)]);
  });

  it('fails the type errors promtool reports: a range vector as the result, an instant vector given to rate()', () => {
    expect(checkExpression('cds_webhook_attempts_total[5m]').problems).toEqual([expect.stringContaining('not a range vector')]);
    expect(checkExpression('rate(cds_webhook_attempts_total)').problems).toEqual([
      'rate() expects a range vector argument, e.g. rate(x[5m])',
    ]);
    expect(checkExpression('sum(rate(cds_webhook_attempts_total[10m:1m]))').problems).toEqual([]);
  });

  it('fails a bad duration, an unknown field, a bad label name, an unbalanced template and a rule that is neither alert nor record', () => {
    const problems = (rule: string) => checkRuleFile(ruleFile(rule)).problems;
    expect(problems(good.replace('for: 5m', 'for: 5 minutes'))).toEqual(['test/CdsGood: for is not a Prometheus duration: "5 minutes"']);
    expect(problems(good.replace('for: 5m', 'for: 5m\nseverity: high'))).toEqual([
      'test/CdsGood: field severity not found in type rulefmt.Rule',
    ]);
    expect(problems(good.replace('  severity: warning', '  on-call: warning'))).toEqual(['test/CdsGood: labels: invalid name "on-call"']);
    expect(problems(good.replace('{{ $value }}', '{{ $value }'))).toEqual(['test/CdsGood: annotations.summary: unbalanced {{ }}']);
    expect(problems(good.replace('alert: CdsGood', 'name: CdsGood'))).toEqual(
      expect.arrayContaining(['test/(unnamed): one of "record" or "alert" must be set']),
    );
    expect(checkRuleFile('groups:\n  - name: a\n    rules: []\n  - name: a\n    rules: []\n').problems).toEqual(['a: repeated group name']);
  });

  it('finds a metric the service does not serve (a misspelt name)', () => {
    const misspelt = checkRuleFile(ruleFile(good.replace('cds_webhook_attempts_total', 'cds_webhook_attempt_total')));
    expect(misspelt.problems).toEqual([]);
    expect(misspelt.rules[0].metrics.filter((name) => !servedServiceMetrics().has(name))).toEqual(['cds_webhook_attempt_total']);
  });
});
