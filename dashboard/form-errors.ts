// How a refused dashboard form reads: the sentence a form words for people where it has one
// ("Choose at least one event."), else the API's `field: problem` (domain/field-errors.ts:
// "url: is required", "since: is required"), never zod's own wording. Every form parses with
// FIELD_ERRORS, so zod's wording never reaches a page.
import type { z } from 'zod';
import { fieldProblems } from '../domain/field-errors.js';

export { FIELD_ERRORS } from '../domain/field-errors.js';

const NOT_AS_EXPECTED = 'The form was not filled in as expected.';

/** A sentence the form wrote for people (capitalised), rather than the API's wording (`must …`, `is required`). */
const isSentence = (problem: string) => /^\p{Lu}/u.test(problem);

/** The first problem of a refused form, for the page's one error line: the form's sentence, or `field: problem`. */
export function formError(error: z.ZodError): string {
  const first = fieldProblems(error.issues)[0];
  if (!first) return NOT_AS_EXPECTED;
  return isSentence(first.problem) ? first.problem : `${first.field}: ${first.problem}`;
}

/** The first problem of each field, for a form that shows each beside its field (its label names it). */
export function formErrors(error: z.ZodError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const { field, problem } of fieldProblems(error.issues)) errors[field.split('.')[0]] ??= problem;
  return errors;
}

/** The first problem of a value parsed on its own (a password, a secret), without a field name. */
export function firstProblem(error: z.ZodError): string {
  return fieldProblems(error.issues)[0]?.problem ?? NOT_AS_EXPECTED;
}
