// A Prometheus rule file checked as `promtool check rules` would, without promtool: the file's
// structure by Prometheus's own rules (rulefmt: the keys of a group and of a rule, exactly one of
// alert and record, durations, label and annotation names, template braces), and every `expr`
// parsed by the Prometheus project's own PromQL grammar (@prometheus-io/lezer-promql, the parser
// of Prometheus's web UI): any syntax error node fails, and so do the type errors promtool reports
// for rules (a range vector as the result; an instant vector where a function needs a range).
// Returns every problem as a line naming the group, the rule and what is wrong.
import { parser } from '@prometheus-io/lezer-promql';
import { parseDocument } from 'yaml';

const GROUP_KEYS = new Set(['name', 'interval', 'query_offset', 'limit', 'rules', 'labels']);
const RULE_KEYS = new Set(['alert', 'record', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations']);
/** Prometheus's duration syntax (model.ParseDuration): units from years to milliseconds, largest first. */
const DURATION = /^(?:\d+y)?(?:\d+w)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?:\d+ms)?$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Functions whose (first) argument is a range vector, e.g. rate(x[5m]). */
const RANGE_FUNCTIONS = new Set([
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'predict_linear', 'resets', 'changes',
  'avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time', 'quantile_over_time',
  'stddev_over_time', 'stdvar_over_time', 'last_over_time', 'present_over_time', 'absent_over_time', 'holt_winters',
  'double_exponential_smoothing', 'mad_over_time', 'ts_of_max_over_time', 'ts_of_min_over_time', 'ts_of_last_over_time',
]); // prettier-ignore
const RANGE_VECTORS = new Set(['MatrixSelector', 'SubqueryExpr']);

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export interface Rule {
  alert?: string;
  record?: string;
  expr?: unknown;
  for?: unknown;
  keep_firing_for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** The node under parentheses, so `(rate(x[5m]))` is read as the call it wraps. */
function unwrap(node: SyntaxNode | null): SyntaxNode | null {
  while (node?.name === 'ParenExpr') node = node.firstChild;
  return node;
}

/** The problems of one PromQL expression, and the metric names its selectors read. */
export function checkExpression(expr: string): { problems: string[]; metrics: string[] } {
  const problems: string[] = [];
  const metrics: string[] = [];
  const tree = parser.parse(expr);
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) {
        problems.push(`syntax error at character ${ref.from + 1}: "${expr.slice(Math.max(0, ref.from - 10), ref.from + 10).trim()}"`);
        return;
      }
      if (ref.name === 'VectorSelector') {
        const identifier = ref.node.getChild('Identifier');
        if (identifier) metrics.push(expr.slice(identifier.from, identifier.to));
      }
      if (ref.name === 'FunctionCall') {
        const identifier = ref.node.getChild('FunctionIdentifier');
        const name = identifier ? expr.slice(identifier.from, identifier.to) : '';
        const body = ref.node.getChild('FunctionCallBody');
        const args = body ? body.getChildren('MatrixSelector').concat(body.getChildren('SubqueryExpr')) : [];
        if (RANGE_FUNCTIONS.has(name) && args.length === 0) problems.push(`${name}() expects a range vector argument, e.g. ${name}(x[5m])`);
      }
    },
  });
  const top = unwrap(tree.topNode.firstChild);
  if (top && RANGE_VECTORS.has(top.name)) problems.push('a rule expression must be an instant vector or a scalar, not a range vector');
  if (top?.name === 'StringLiteral') problems.push('a rule expression must be an instant vector or a scalar, not a string');
  return { problems, metrics };
}

function checkDuration(value: unknown, what: string): string[] {
  return typeof value === 'string' && value !== '' && DURATION.test(value)
    ? []
    : [`${what} is not a Prometheus duration: ${JSON.stringify(value)}`];
}

function checkNames(map: unknown, what: string): string[] {
  if (map === undefined) return [];
  if (typeof map !== 'object' || map === null || Array.isArray(map)) return [`${what} must be a map`];
  return Object.entries(map).flatMap(([name, value]) => [
    ...(LABEL_NAME.test(name) && !name.startsWith('__') ? [] : [`${what}: invalid name "${name}"`]),
    ...(typeof value === 'string' ? [] : [`${what}.${name} must be a string`]),
    // Go templates: an unclosed or stray brace pair makes Prometheus refuse the file.
    ...(typeof value === 'string' && value.split('{{').length !== value.split('}}').length ? [`${what}.${name}: unbalanced {{ }}`] : []),
  ]);
}

/** One rule's problems (a rule of `group`), and the metrics its expression reads. */
export function checkRule(rule: Rule, group: string): { problems: string[]; metrics: string[] } {
  const name = rule.alert ?? rule.record ?? '(unnamed)';
  const where = `${group}/${name}`;
  const problems: string[] = [];
  for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) problems.push(`field ${key} not found in type rulefmt.Rule`);
  if ((rule.alert === undefined) === (rule.record === undefined)) problems.push('one of "record" or "alert" must be set');
  if (rule.record !== undefined) {
    if (typeof rule.record !== 'string' || !METRIC_NAME.test(rule.record))
      problems.push(`invalid recording rule name ${JSON.stringify(rule.record)}`);
    if (rule.for !== undefined || rule.annotations !== undefined) problems.push('a recording rule takes no "for" and no "annotations"');
  }
  if (rule.alert !== undefined && (typeof rule.alert !== 'string' || rule.alert === '')) problems.push('invalid alert name');
  if (rule.for !== undefined) problems.push(...checkDuration(rule.for, 'for'));
  if (rule.keep_firing_for !== undefined) problems.push(...checkDuration(rule.keep_firing_for, 'keep_firing_for'));
  problems.push(...checkNames(rule.labels, 'labels'), ...checkNames(rule.annotations, 'annotations'));
  let metrics: string[] = [];
  if (typeof rule.expr !== 'string' || rule.expr.trim() === '') problems.push('field "expr" must be a non-empty string');
  else {
    const checked = checkExpression(rule.expr);
    problems.push(...checked.problems);
    metrics = checked.metrics;
  }
  return { problems: problems.map((problem) => `${where}: ${problem}`), metrics };
}

/** Every problem of a rule file's text, and its rules by group. */
export function checkRuleFile(text: string): { problems: string[]; rules: Array<Rule & { group: string; metrics: string[] }> } {
  const document = parseDocument(text);
  if (document.errors.length > 0) return { problems: document.errors.map((e) => `YAML: ${e.message}`), rules: [] };
  const content = document.toJS() as unknown;
  const problems: string[] = [];
  const rules: Array<Rule & { group: string; metrics: string[] }> = [];
  if (typeof content !== 'object' || content === null || !Array.isArray((content as { groups?: unknown }).groups)) {
    return { problems: ['the file must be a map with a list "groups"'], rules };
  }
  for (const key of Object.keys(content)) if (key !== 'groups') problems.push(`field ${key} not found in type rulefmt.RuleGroups`);
  const seen = new Set<string>();
  for (const group of (content as { groups: Array<Record<string, unknown>> }).groups) {
    const name = typeof group.name === 'string' ? group.name : '';
    if (name === '') problems.push('a group has no name');
    else if (seen.has(name)) problems.push(`${name}: repeated group name`);
    seen.add(name);
    for (const key of Object.keys(group))
      if (!GROUP_KEYS.has(key)) problems.push(`${name}: field ${key} not found in type rulefmt.RuleGroup`);
    if (group.interval !== undefined) problems.push(...checkDuration(group.interval, `${name}: interval`));
    if (!Array.isArray(group.rules)) {
      problems.push(`${name}: "rules" must be a list`);
      continue;
    }
    for (const rule of group.rules as Rule[]) {
      const checked = checkRule(rule, name);
      problems.push(...checked.problems);
      rules.push({ ...rule, group: name, metrics: checked.metrics });
    }
  }
  return { problems, rules };
}
