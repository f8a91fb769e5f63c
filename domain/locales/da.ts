// Danish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "du", as Danish banks do. Dates read "den 24. november",
// "mellem den 24. og 26. november". `other` in a confidence select is the Low wording.
// CLDR also gives Danish to Norwegian Bokmål readers (domain/locale.ts).
import type { Catalog } from './catalog.js';

const LOW = 'men for dit område er dette skøn mindre sikkert';
const SUPPORT = 'Kontakt kundeservice';

export const da: Catalog = {
  when:
    '{shape, select, ' +
    'single {den {maxDay}. {maxMonth}} ' +
    'sameMonth {mellem den {minDay}. og {maxDay}. {maxMonth}} ' +
    'other {mellem den {minDay}. {minMonth} og den {maxDay}. {maxMonth}}}',

  dispatched:
    'Dit kort er sendt. {confidence, select, ' +
    'High {Det forventes at være fremme {when}.} ' +
    'Medium {Det er højst sandsynligt fremme {when}.} ' +
    `other {Det forventes at være fremme {when}, ${LOW}.}}`,

  in_transit:
    'Dit kort er på vej. {confidence, select, ' +
    'High {Det forventes at være fremme {when}.} ' +
    'Medium {Det er højst sandsynligt fremme {when}.} ' +
    `other {Det forventes at være fremme {when}, ${LOW}.}}`,

  out_for_delivery:
    'Dit kort er ude til omdeling {confidence, select, ' +
    'High {og forventes at være fremme {when}.} ' +
    'Medium {og er højst sandsynligt fremme {when}.} ' +
    `other {og forventes at være fremme {when}, ${LOW}.}}`,

  delivered: 'Dit kort blev leveret {when}. Aktivér kortet, så du kan begynde at bruge det.',

  exception: {
    failed_attempt:
      `Dit kort kunne ikke leveres. ${SUPPORT} for at aftale en ny levering, ` +
      '{confidence, select, High {som forventes at ske {when}} Medium {sandsynligvis {when}} other {muligvis {when}}}.',
    postal_delay:
      'Dit kort er blevet forsinket i postgangen {confidence, select, ' +
      'High {og forventes nu at være fremme {when}} ' +
      'Medium {og er højst sandsynligt fremme {when}} ' +
      'other {og kan være fremme {when}, men dette skøn er mindre sikkert}}. ' +
      `${SUPPORT}, hvis du har brug for kortet før.`,
    address_issue: `Der er et problem med leveringsadressen til dit kort. ${SUPPORT} for at få den rettet.`,
    damaged: `Dit kort er blevet beskadiget under forsendelsen. ${SUPPORT} for at få et nyt kort.`,
    lost: `Dit kort ser ud til at være blevet væk under forsendelsen. ${SUPPORT} for at få et nyt kort.`,
    returned: `Dit kort er sendt retur til afsenderen. ${SUPPORT} for at aftale en ny forsendelse.`,
    other: `Der er opstået et problem med leveringen af dit kort. ${SUPPORT} for at få hjælp.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Dit kort er ikke nået frem inden for den forventede tid. ${SUPPORT} for at undersøge sagen eller få et nyt kort.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Levering af dit kort',
    statusHeading: 'Leveringsstatus',
    stepDone: 'færdig',
    stepCurrent: 'aktuelt trin',
    stepNext: 'endnu ikke',
    steps: { dispatched: 'Afsendt', in_transit: 'Undervejs', out_for_delivery: 'Ude til levering', delivered: 'Leveret' },
    exceptionHeading: 'Der er et problem med leveringen',
    reasons: {
      failed_attempt: 'Leveringsforsøget mislykkedes',
      postal_delay: 'Forsinket i posten',
      address_issue: 'Problem med adressen',
      damaged: 'Beskadiget under transporten',
      lost: 'Forsvundet under transporten',
      returned: 'Returneret til afsenderen',
      other: 'Leveringsproblem',
      overdue: 'Senere end forventet',
    },
    windowHeading: 'Forventet levering',
    deliveredHeading: 'Leveret den',
    activate: 'Aktivér dit kort',
    contactSupport: 'Kontakt kundeservice',
    callSupport: 'Ring til kundeservice: {phone}',
    timelineHeading: 'Historik',
    timelineEmpty: 'Ingen scanning fra transportøren endnu.',
    lastUpdated: 'Senest opdateret: {time}',
    languages: 'Andre sprog',
    gateIntro: 'Indtast postnummeret på leveringsadressen for at se, hvor dit kort er.',
    postalCode: 'Postnummer',
    gateSubmit: 'Vis leveringsstatus',
    gateWrong: 'Postnummeret passer ikke. Tjek det, og prøv igen.',
    notFoundTitle: 'Linket blev ikke fundet',
    notFoundText: 'Dette sporingslink findes ikke. Tjek, at du har åbnet hele linket fra din besked.',
    erasedTitle: 'Sporingen er slettet',
    erasedText:
      'Sporingen af dette kort er slettet efter anmodning fra din kortudsteder; intet om det gemmes. Kontakt din kortudsteder for nyt om dit kort.',
    goneTitle: 'Linket er udløbet',
    goneText: 'Kontakt udstederen af dit kort for nyt om dit kort.',
    limitedTitle: 'For mange forsøg',
    limitedText: 'Vent et par minutter, og prøv så igen.',
    errorTitle: 'Noget gik galt',
    errorText: 'Prøv igen om et øjeblik.',
  },
};
