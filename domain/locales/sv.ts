// Swedish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "du", as Swedish banks do. Dates read "den 24 november",
// "mellan den 24 och 26 november". `other` in a confidence select is the Low wording.
import type { Catalog } from './catalog.js';

const LOW = 'men för ditt område är den här uppskattningen mindre säker';
const SUPPORT = 'Kontakta kundtjänst';

export const sv: Catalog = {
  when:
    '{shape, select, ' +
    'single {den {maxDay} {maxMonth}} ' +
    'sameMonth {mellan den {minDay} och {maxDay} {maxMonth}} ' +
    'other {mellan den {minDay} {minMonth} och den {maxDay} {maxMonth}}}',

  dispatched:
    'Ditt kort har skickats. {confidence, select, ' +
    'High {Det bör komma fram {when}.} ' +
    'Medium {Det kommer med största sannolikhet fram {when}.} ' +
    `other {Det bör komma fram {when}, ${LOW}.}}`,

  in_transit:
    'Ditt kort är på väg. {confidence, select, ' +
    'High {Det bör komma fram {when}.} ' +
    'Medium {Det kommer med största sannolikhet fram {when}.} ' +
    `other {Det bör komma fram {when}, ${LOW}.}}`,

  out_for_delivery:
    'Ditt kort är ute för leverans {confidence, select, ' +
    'High {och bör komma fram {when}.} ' +
    'Medium {och kommer med största sannolikhet fram {when}.} ' +
    `other {och bör komma fram {when}, ${LOW}.}}`,

  delivered: 'Ditt kort levererades {when}. Aktivera det för att börja använda det.',

  exception: {
    failed_attempt:
      `Ditt kort kunde inte levereras. ${SUPPORT} för att boka en ny leverans, ` +
      '{confidence, select, High {som beräknas ske {when}} Medium {troligen {when}} other {möjligen {when}}}.',
    postal_delay:
      'Ditt kort har försenats i postgången {confidence, select, ' +
      'High {och bör nu komma fram {when}} ' +
      'Medium {och kommer med största sannolikhet fram {when}} ' +
      'other {och kan komma fram {when}, men den här uppskattningen är mindre säker}}. ' +
      `${SUPPORT} om du behöver kortet tidigare.`,
    address_issue: `Det finns ett problem med leveransadressen för ditt kort. ${SUPPORT} för att få adressen rättad.`,
    damaged: `Ditt kort har skadats under transporten. ${SUPPORT} för att få ett nytt kort.`,
    lost: `Ditt kort verkar ha kommit bort under transporten. ${SUPPORT} för att få ett nytt kort.`,
    returned: `Ditt kort har skickats tillbaka till avsändaren. ${SUPPORT} för att ordna en ny leverans.`,
    other: `Det har uppstått ett problem med leveransen av ditt kort. ${SUPPORT} för att få hjälp.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Ditt kort har inte kommit fram inom den förväntade tiden. ${SUPPORT} för att undersöka saken eller få ett nytt kort.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Leverans av ditt kort',
    statusHeading: 'Leveransstatus',
    stepDone: 'klart',
    stepCurrent: 'aktuellt steg',
    stepNext: 'inte än',
    steps: { dispatched: 'Skickat', in_transit: 'På väg', out_for_delivery: 'Ute för leverans', delivered: 'Levererat' },
    exceptionHeading: 'Det finns ett problem med leveransen',
    reasons: {
      failed_attempt: 'Leveransförsöket misslyckades',
      postal_delay: 'Försenat i posten',
      address_issue: 'Problem med adressen',
      damaged: 'Skadat under transporten',
      lost: 'Försvunnet under transporten',
      returned: 'Returnerat till avsändaren',
      other: 'Leveransproblem',
      overdue: 'Senare än väntat',
    },
    windowHeading: 'Beräknad leverans',
    deliveredHeading: 'Levererat den',
    activate: 'Aktivera ditt kort',
    contactSupport: 'Kontakta kundtjänst',
    callSupport: 'Ring kundtjänst: {phone}',
    timelineHeading: 'Historik',
    timelineEmpty: 'Ingen skanning från transportören än.',
    lastUpdated: 'Senast uppdaterad: {time}',
    languages: 'Andra språk',
    gateIntro: 'Ange postnumret till leveransadressen för att se var ditt kort är.',
    postalCode: 'Postnummer',
    gateSubmit: 'Visa leveransstatus',
    gateWrong: 'Postnumret stämmer inte. Kontrollera det och försök igen.',
    notFoundTitle: 'Länken hittades inte',
    notFoundText: 'Den här spårningslänken finns inte. Kontrollera att du öppnade hela länken i ditt meddelande.',
    erasedTitle: 'Spårningen är raderad',
    erasedText:
      'Spårningen av det här kortet har raderats på begäran av din kortutgivare; inget av den sparas. Kontakta din kortutgivare för nyheter om ditt kort.',
    goneTitle: 'Länken har gått ut',
    goneText: 'Kontakta den som utfärdat ditt kort för besked om kortet.',
    limitedTitle: 'För många försök',
    limitedText: 'Vänta några minuter och försök sedan igen.',
    errorTitle: 'Något gick fel',
    errorText: 'Försök igen om en stund.',
  },
};
