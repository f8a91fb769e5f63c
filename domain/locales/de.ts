// German messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Formal address (Sie), as German-speaking banks write to cardholders; usable as is in Austria and
// Switzerland (month names come from Intl, so de-AT reads "Jänner"). Dates read "am 24. November",
// "zwischen dem 24. und 26. November". `other` in a confidence select is the Low wording.
import type { Catalog } from './catalog.js';

const LOW = 'diese Schätzung ist für Ihre Region jedoch weniger zuverlässig';
const SUPPORT = 'Bitte wenden Sie sich an den Kundenservice';

export const de: Catalog = {
  when:
    '{shape, select, ' +
    'single {am {maxDay}. {maxMonth}} ' +
    'sameMonth {zwischen dem {minDay}. und {maxDay}. {maxMonth}} ' +
    'other {zwischen dem {minDay}. {minMonth} und dem {maxDay}. {maxMonth}}}',

  dispatched:
    'Ihre Karte wurde versandt. {confidence, select, ' +
    'High {Sie sollte {when} bei Ihnen eintreffen.} ' +
    'Medium {Sie wird sehr wahrscheinlich {when} bei Ihnen eintreffen.} ' +
    `other {Sie sollte {when} bei Ihnen eintreffen, ${LOW}.}}`,

  in_transit:
    'Ihre Karte ist unterwegs. {confidence, select, ' +
    'High {Sie sollte {when} bei Ihnen eintreffen.} ' +
    'Medium {Sie wird sehr wahrscheinlich {when} bei Ihnen eintreffen.} ' +
    `other {Sie sollte {when} bei Ihnen eintreffen, ${LOW}.}}`,

  out_for_delivery:
    'Ihre Karte ist in der Zustellung {confidence, select, ' +
    'High {und sollte {when} bei Ihnen eintreffen.} ' +
    'Medium {und wird sehr wahrscheinlich {when} bei Ihnen eintreffen.} ' +
    `other {und sollte {when} bei Ihnen eintreffen, ${LOW}.}}`,

  delivered: 'Ihre Karte wurde {when} zugestellt. Aktivieren Sie sie, um sie nutzen zu können.',

  exception: {
    failed_attempt:
      `Ihre Karte konnte nicht zugestellt werden. ${SUPPORT}, um eine neue Zustellung zu vereinbaren ` +
      '({confidence, select, High {voraussichtlich {when}} Medium {sehr wahrscheinlich {when}} other {möglicherweise {when}}}).',
    postal_delay:
      'Ihre Karte ist von einer Verzögerung bei der Post betroffen {confidence, select, ' +
      'High {und sollte nun {when} bei Ihnen eintreffen} ' +
      'Medium {und wird sehr wahrscheinlich {when} bei Ihnen eintreffen} ' +
      'other {und könnte {when} eintreffen, diese Schätzung ist jedoch weniger zuverlässig}}. ' +
      `${SUPPORT}, wenn Sie die Karte früher benötigen.`,
    address_issue: `Es gibt ein Problem mit der Zustelladresse Ihrer Karte. ${SUPPORT}, um die Adresse zu korrigieren.`,
    damaged: `Ihre Karte wurde auf dem Versandweg beschädigt. ${SUPPORT}, um eine Ersatzkarte zu erhalten.`,
    lost: `Ihre Karte ist auf dem Versandweg offenbar verloren gegangen. ${SUPPORT}, um eine Ersatzkarte zu erhalten.`,
    returned: `Ihre Karte wurde an den Absender zurückgeschickt. ${SUPPORT}, um einen erneuten Versand zu veranlassen.`,
    other: `Bei der Zustellung Ihrer Karte ist ein Problem aufgetreten. ${SUPPORT}, damit wir Ihnen weiterhelfen können.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Ihre Karte ist nicht im erwarteten Zeitraum angekommen. ${SUPPORT}, um nachzuforschen oder eine Ersatzkarte zu erhalten.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Zustellung Ihrer Karte',
    statusHeading: 'Zustellstatus',
    stepDone: 'erledigt',
    stepCurrent: 'aktueller Schritt',
    stepNext: 'noch nicht',
    steps: { dispatched: 'Versandt', in_transit: 'Unterwegs', out_for_delivery: 'In Zustellung', delivered: 'Zugestellt' },
    exceptionHeading: 'Bei der Zustellung gibt es ein Problem',
    reasons: {
      failed_attempt: 'Zustellversuch fehlgeschlagen',
      postal_delay: 'Verzögerung bei der Post',
      address_issue: 'Problem mit der Adresse',
      damaged: 'Beim Transport beschädigt',
      lost: 'Beim Transport verloren gegangen',
      returned: 'An den Absender zurückgeschickt',
      other: 'Problem bei der Zustellung',
      overdue: 'Später als erwartet',
    },
    windowHeading: 'Voraussichtliche Zustellung',
    deliveredHeading: 'Zugestellt am',
    activate: 'Karte aktivieren',
    contactSupport: 'Kundenservice kontaktieren',
    callSupport: 'Kundenservice anrufen: {phone}',
    timelineHeading: 'Verlauf',
    timelineEmpty: 'Noch kein Scan des Zustellers.',
    lastUpdated: 'Zuletzt aktualisiert: {time}',
    languages: 'Andere Sprachen',
    gateIntro: 'Um zu sehen, wo Ihre Karte ist, geben Sie die Postleitzahl der Lieferadresse ein.',
    postalCode: 'Postleitzahl',
    gateSubmit: 'Zustellstatus anzeigen',
    gateWrong: 'Diese Postleitzahl stimmt nicht. Prüfen Sie sie und versuchen Sie es erneut.',
    notFoundTitle: 'Link nicht gefunden',
    notFoundText: 'Diesen Sendungslink gibt es nicht. Prüfen Sie, ob Sie den vollständigen Link aus Ihrer Nachricht geöffnet haben.',
    erasedTitle: 'Sendungsverfolgung gelöscht',
    erasedText:
      'Die Sendungsverfolgung dieser Karte wurde auf Wunsch Ihres Kartenausgebers gelöscht; nichts davon wird aufbewahrt. Für Neuigkeiten zu Ihrer Karte wenden Sie sich an Ihren Kartenausgeber.',
    goneTitle: 'Dieser Link ist abgelaufen',
    goneText: 'Für Neuigkeiten zu Ihrer Karte wenden Sie sich an den Herausgeber Ihrer Karte.',
    limitedTitle: 'Zu viele Versuche',
    limitedText: 'Warten Sie einige Minuten und versuchen Sie es dann erneut.',
    errorTitle: 'Etwas ist schiefgelaufen',
    errorText: 'Versuchen Sie es gleich noch einmal.',
  },
};
