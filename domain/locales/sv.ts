// Swedish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "du", as Swedish banks do. Dates read "den 24 november",
// "mellan den 24 och 26 november". `other` in a confidence select is the Low wording.
import type { Catalog } from './index.js';

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
};
