// Dutch messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "je", as Dutch and Flemish banks do in their apps, and avoids "hij"
// or "ze" for the card (Netherlands and Flanders differ there). Dates read "op 24 november",
// "tussen 24 en 26 november". `other` in a confidence select is the Low wording.
import type { Catalog } from './catalog.js';

const LOW = 'maar voor jouw regio is deze schatting minder zeker';
const SUPPORT = 'Neem contact op met de klantenservice';

/** "… en wordt {when} bezorgd", calibrated to the confidence. */
const ARRIVES =
  '{confidence, select, ' +
  'High {en wordt naar verwachting {when} bezorgd.} ' +
  'Medium {en wordt zeer waarschijnlijk {when} bezorgd.} ' +
  `other {en wordt naar verwachting {when} bezorgd, ${LOW}.}}`;

export const nl: Catalog = {
  when:
    '{shape, select, ' +
    'single {op {maxDay} {maxMonth}} ' +
    'sameMonth {tussen {minDay} en {maxDay} {maxMonth}} ' +
    'other {tussen {minDay} {minMonth} en {maxDay} {maxMonth}}}',

  dispatched: `Je kaart is verstuurd ${ARRIVES}`,

  in_transit: `Je kaart is onderweg ${ARRIVES}`,

  out_for_delivery: `Je kaart is bij de bezorger ${ARRIVES}`,

  delivered: 'Je kaart is {when} bezorgd. Activeer je kaart om deze te kunnen gebruiken.',

  exception: {
    failed_attempt:
      `Het is niet gelukt je kaart te bezorgen. ${SUPPORT} voor een nieuwe bezorging, ` +
      '{confidence, select, High {naar verwachting {when}} Medium {zeer waarschijnlijk {when}} other {mogelijk {when}}}.',
    postal_delay:
      'Je kaart heeft vertraging opgelopen bij de post {confidence, select, ' +
      'High {en wordt nu naar verwachting {when} bezorgd} ' +
      'Medium {en wordt zeer waarschijnlijk {when} bezorgd} ' +
      'other {en wordt mogelijk {when} bezorgd, maar deze schatting is minder zeker}}. ' +
      `${SUPPORT} als je de kaart eerder nodig hebt.`,
    address_issue: `Er is een probleem met het bezorgadres van je kaart. ${SUPPORT} om het adres te laten aanpassen.`,
    damaged: `Je kaart is tijdens de verzending beschadigd. ${SUPPORT} om een nieuwe kaart aan te vragen.`,
    lost: `Je kaart is tijdens de verzending waarschijnlijk zoekgeraakt. ${SUPPORT} om een nieuwe kaart aan te vragen.`,
    returned: `Je kaart is teruggestuurd naar de afzender. ${SUPPORT} om de kaart opnieuw te laten versturen.`,
    other: `Er is een probleem met de bezorging van je kaart. ${SUPPORT} voor hulp.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Je kaart is niet binnen de verwachte tijd aangekomen. ${SUPPORT} om dit na te gaan of een nieuwe kaart aan te vragen.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Bezorging van uw kaart',
    statusHeading: 'Bezorgstatus',
    stepDone: 'klaar',
    stepCurrent: 'huidige stap',
    stepNext: 'nog niet',
    steps: { dispatched: 'Verzonden', in_transit: 'Onderweg', out_for_delivery: 'Wordt bezorgd', delivered: 'Bezorgd' },
    exceptionHeading: 'Er is een probleem met de bezorging',
    reasons: {
      failed_attempt: 'Bezorgpoging mislukt',
      postal_delay: 'Vertraging bij de post',
      address_issue: 'Probleem met het adres',
      damaged: 'Beschadigd tijdens transport',
      lost: 'Kwijtgeraakt tijdens transport',
      returned: 'Teruggestuurd naar afzender',
      other: 'Bezorgprobleem',
      overdue: 'Later dan verwacht',
    },
    windowHeading: 'Verwachte bezorging',
    deliveredHeading: 'Bezorgd op',
    activate: 'Activeer uw kaart',
    contactSupport: 'Neem contact op met de klantenservice',
    callSupport: 'Bel de klantenservice: {phone}',
    timelineHeading: 'Geschiedenis',
    timelineEmpty: 'Nog geen scan van de vervoerder.',
    lastUpdated: 'Laatst bijgewerkt: {time}',
    languages: 'Andere talen',
    gateIntro: 'Vul de postcode van het bezorgadres in om te zien waar uw kaart is.',
    postalCode: 'Postcode',
    gateSubmit: 'Bezorgstatus tonen',
    gateWrong: 'Die postcode klopt niet. Controleer hem en probeer het opnieuw.',
    notFoundTitle: 'Link niet gevonden',
    notFoundText: 'Deze volglink bestaat niet. Controleer of u de volledige link uit uw bericht hebt geopend.',
    erasedTitle: 'Tracking gewist',
    erasedText:
      'De tracking van deze kaart is gewist op verzoek van uw kaartuitgever; er wordt niets van bewaard. Neem voor nieuws over uw kaart contact op met uw kaartuitgever.',
    goneTitle: 'Deze link is verlopen',
    goneText: 'Neem voor nieuws over uw kaart contact op met de uitgever van uw kaart.',
    limitedTitle: 'Te veel pogingen',
    limitedText: 'Wacht een paar minuten en probeer het dan opnieuw.',
    errorTitle: 'Er ging iets mis',
    errorText: 'Probeer het zo opnieuw.',
  },
};
