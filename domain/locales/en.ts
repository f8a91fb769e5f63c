// English messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Neutral between British and American usage; the date order comes from the locale's region.
// `other` in a confidence select is the Low wording: an estimate that is less certain.
import type { Catalog } from './catalog.js';

export const en: Catalog = {
  when:
    '{shape, select, ' +
    'single {{order, select, monthFirst {on {maxMonth} {maxDay}} other {on {maxDay} {maxMonth}}}} ' +
    'sameMonth {{order, select, monthFirst {between {maxMonth} {minDay} and {maxDay}} other {between {minDay} and {maxDay} {maxMonth}}}} ' +
    'other {{order, select, monthFirst {between {minMonth} {minDay} and {maxMonth} {maxDay}} other {between {minDay} {minMonth} and {maxDay} {maxMonth}}}}}',

  dispatched:
    'Your card has been sent. {confidence, select, ' +
    'High {It should arrive {when}.} ' +
    'Medium {It will most likely arrive {when}.} ' +
    'other {It should arrive {when}, but this estimate is less certain for your area.}}',

  in_transit:
    'Your card is on its way. {confidence, select, ' +
    'High {It should arrive {when}.} ' +
    'Medium {It will most likely arrive {when}.} ' +
    'other {It should arrive {when}, but this estimate is less certain for your area.}}',

  out_for_delivery:
    'Your card is out for delivery {confidence, select, ' +
    'High {and should arrive {when}.} ' +
    'Medium {and will most likely arrive {when}.} ' +
    'other {and should arrive {when}, but this estimate is less certain for your area.}}',

  delivered: 'Your card was delivered {when}. Activate it to start using it.',

  exception: {
    failed_attempt:
      'The carrier could not deliver your card. Please contact support to arrange a new delivery, {confidence, select, ' +
      'High {expected {when}} Medium {most likely {when}} other {possibly {when}}}.',
    postal_delay:
      'Your card has been held up by a postal delay {confidence, select, ' +
      'High {and should now arrive {when}} ' +
      'Medium {and will most likely arrive {when}} ' +
      'other {and may arrive {when}, though this estimate is less certain}}. ' +
      'Please contact support if you need it sooner.',
    address_issue: 'There is a problem with the delivery address for your card. Please contact support to correct it.',
    damaged: 'Your card was damaged in transit. Please contact support to have it replaced.',
    lost: 'Your card seems to have been lost in transit. Please contact support to have it replaced.',
    returned: 'Your card has been returned to the sender. Please contact support to arrange a new delivery.',
    other: 'There is a problem with the delivery of your card. Please contact support for help.',
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: 'Your card has not arrived within the expected time. Please contact support to check on it or have it replaced.',
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Card delivery',
    statusHeading: 'Delivery status',
    stepDone: 'done',
    stepCurrent: 'current step',
    stepNext: 'not yet',
    steps: { dispatched: 'Sent', in_transit: 'In transit', out_for_delivery: 'Out for delivery', delivered: 'Delivered' },
    exceptionHeading: 'There is a problem with the delivery',
    reasons: {
      failed_attempt: 'Delivery attempt failed',
      postal_delay: 'Delayed in the post',
      address_issue: 'Problem with the address',
      damaged: 'Damaged in transit',
      lost: 'Lost in transit',
      returned: 'Returned to sender',
      other: 'Delivery problem',
      overdue: 'Later than expected',
    },
    windowHeading: 'Expected delivery',
    deliveredHeading: 'Delivered on',
    activate: 'Activate your card',
    contactSupport: 'Contact support',
    callSupport: 'Call support: {phone}',
    timelineHeading: 'History',
    timelineEmpty: 'No carrier scan yet.',
    lastUpdated: 'Last updated {time}',
    languages: 'Other languages',
    gateIntro: 'To see where your card is, enter the postal code it is being sent to.',
    postalCode: 'Postal code',
    gateSubmit: 'Show delivery status',
    gateWrong: 'That postal code does not match. Check it and try again.',
    notFoundTitle: 'Link not found',
    notFoundText: 'This tracking link does not exist. Check that you opened the whole link from your message.',
    erasedTitle: 'Tracking erased',
    erasedText:
      "The tracking of this card was erased at your card issuer's request; nothing about it is kept. For news about your card, contact your card issuer.",
    goneTitle: 'This link has expired',
    goneText: 'For news about your card, contact your card issuer.',
    limitedTitle: 'Too many attempts',
    limitedText: 'Wait a few minutes, then try again.',
    errorTitle: 'Something went wrong',
    errorText: 'Try again in a moment.',
  },
};
