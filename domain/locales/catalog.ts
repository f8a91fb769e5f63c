// The shape of one language's message catalog (domain/locales/index.ts holds the catalogs and the
// arguments their messages receive): the cardholder messages per status and exception reason, and
// the tracking page's texts. Its own file so that each language's file can name it without
// importing the index that imports them.
import type { DispatchStatus, ExceptionReason } from '../vocabulary.js';

export interface Catalog {
  /** The delivery window as a phrase that completes "It should arrive …" / "delivered …". */
  when: string;
  dispatched: string;
  in_transit: string;
  out_for_delivery: string;
  delivered: string;
  /** One message per reason: each says what happened and asks the cardholder to contact support. */
  exception: Record<ExceptionReason, string>;
  /** The cardholder's tracking page (api/tracking-page/); `{phone}` and `{time}` are its only arguments. */
  page: PageCatalog;
}

export interface PageCatalog {
  title: string;
  statusHeading: string;
  /** Visually hidden state of a step, read by screen readers. */
  stepDone: string;
  stepCurrent: string;
  stepNext: string;
  steps: Record<Exclude<DispatchStatus, 'exception'>, string>;
  exceptionHeading: string;
  /** The exception reason in a few words (the message of ui_suggestion says the rest). */
  reasons: Record<ExceptionReason, string>;
  windowHeading: string;
  deliveredHeading: string;
  activate: string;
  contactSupport: string;
  callSupport: string;
  timelineHeading: string;
  timelineEmpty: string;
  lastUpdated: string;
  languages: string;
  gateIntro: string;
  postalCode: string;
  gateSubmit: string;
  gateWrong: string;
  notFoundTitle: string;
  notFoundText: string;
  /** A link of a card whose data was erased (DESIGN §11): 404, no issuer. */
  erasedTitle: string;
  erasedText: string;
  goneTitle: string;
  goneText: string;
  limitedTitle: string;
  limitedText: string;
  errorTitle: string;
  errorText: string;
}
