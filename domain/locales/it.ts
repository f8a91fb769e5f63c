// Italian messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "tu", as Italian banks do in their apps. Dates read "il 24 novembre",
// "tra il 24 e il 26 novembre", with "1º" for the first of the month and the elided article before
// 8 and 11 ("l’8 dicembre", "tra il 1º e l’11 dicembre").
// `other` in a confidence select is the Low wording: an estimate that is less precise.
import type { Catalog } from './catalog.js';

const MIN_DAY = '{minDay, plural, =1 {il 1º} =8 {l’8} =11 {l’11} other {il #}}';
const MAX_DAY = '{maxDay, plural, =1 {il 1º} =8 {l’8} =11 {l’11} other {il #}}';
const LOW = 'ma per la tua zona questa stima è meno precisa';
const SUPPORT = 'Contatta il servizio clienti';

export const it: Catalog = {
  when:
    '{shape, select, ' +
    `single {${MAX_DAY} {maxMonth}} ` +
    `sameMonth {tra ${MIN_DAY} e ${MAX_DAY} {maxMonth}} ` +
    `other {tra ${MIN_DAY} {minMonth} e ${MAX_DAY} {maxMonth}}}`,

  dispatched:
    'La tua carta è stata spedita. {confidence, select, ' +
    'High {Dovrebbe arrivare {when}.} ' +
    'Medium {Molto probabilmente arriverà {when}.} ' +
    `other {Dovrebbe arrivare {when}, ${LOW}.}}`,

  in_transit:
    'La tua carta è in viaggio. {confidence, select, ' +
    'High {Dovrebbe arrivare {when}.} ' +
    'Medium {Molto probabilmente arriverà {when}.} ' +
    `other {Dovrebbe arrivare {when}, ${LOW}.}}`,

  out_for_delivery:
    'La tua carta è in consegna {confidence, select, ' +
    'High {e dovrebbe arrivare {when}.} ' +
    'Medium {e molto probabilmente arriverà {when}.} ' +
    `other {e dovrebbe arrivare {when}, ${LOW}.}}`,

  delivered: 'La tua carta è stata consegnata {when}. Attivala per iniziare a usarla.',

  exception: {
    failed_attempt:
      `Non è stato possibile consegnare la tua carta. ${SUPPORT} per concordare una nuova consegna, ` +
      '{confidence, select, High {che dovrebbe avvenire {when}} Medium {molto probabilmente {when}} other {forse {when}}}.',
    postal_delay:
      'La tua carta ha subito un ritardo nella spedizione postale {confidence, select, ' +
      'High {e ora dovrebbe arrivare {when}} ' +
      'Medium {e molto probabilmente arriverà {when}} ' +
      'other {e potrebbe arrivare {when}, ma questa stima è meno precisa}}. ' +
      `${SUPPORT} se ti serve prima.`,
    address_issue: `C’è un problema con l’indirizzo di consegna della tua carta. ${SUPPORT} per correggerlo.`,
    damaged: `La tua carta è stata danneggiata durante la spedizione. ${SUPPORT} per richiederne una nuova.`,
    lost: `Sembra che la tua carta sia andata persa durante la spedizione. ${SUPPORT} per richiederne una nuova.`,
    returned: `La tua carta è stata restituita al mittente. ${SUPPORT} per organizzare una nuova spedizione.`,
    other: `Si è verificato un problema con la consegna della tua carta. ${SUPPORT} per ricevere assistenza.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `La tua carta non è arrivata nei tempi previsti. ${SUPPORT} per verificare la spedizione o richiederne una nuova.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Consegna della tua carta',
    statusHeading: 'Stato della consegna',
    stepDone: 'completato',
    stepCurrent: 'passaggio attuale',
    stepNext: 'non ancora',
    steps: { dispatched: 'Spedita', in_transit: 'In transito', out_for_delivery: 'In consegna', delivered: 'Consegnata' },
    exceptionHeading: 'C’è un problema con la consegna',
    reasons: {
      failed_attempt: 'Tentativo di consegna non riuscito',
      postal_delay: 'Ritardo postale',
      address_issue: 'Problema con l’indirizzo',
      damaged: 'Danneggiata durante il trasporto',
      lost: 'Smarrita durante il trasporto',
      returned: 'Restituita al mittente',
      other: 'Problema di consegna',
      overdue: 'Più tardi del previsto',
    },
    windowHeading: 'Consegna prevista',
    deliveredHeading: 'Consegnata il',
    activate: 'Attiva la tua carta',
    contactSupport: 'Contatta l’assistenza',
    callSupport: 'Chiama l’assistenza: {phone}',
    timelineHeading: 'Cronologia',
    timelineEmpty: 'Ancora nessuna scansione del corriere.',
    lastUpdated: 'Ultimo aggiornamento: {time}',
    languages: 'Altre lingue',
    gateIntro: 'Per vedere dove si trova la tua carta, inserisci il codice postale dell’indirizzo di consegna.',
    postalCode: 'Codice postale',
    gateSubmit: 'Mostra lo stato della consegna',
    gateWrong: 'Questo codice postale non corrisponde. Controllalo e riprova.',
    notFoundTitle: 'Link non trovato',
    notFoundText: 'Questo link di tracciamento non esiste. Verifica di aver aperto il link completo del messaggio.',
    erasedTitle: 'Tracciamento cancellato',
    erasedText:
      'Il tracciamento di questa carta è stato cancellato su richiesta dell’emittente; non ne viene conservato nulla. Per notizie sulla carta, contatta l’emittente.',
    goneTitle: 'Questo link è scaduto',
    goneText: 'Per notizie sulla tua carta, contatta l’emittente della carta.',
    limitedTitle: 'Troppi tentativi',
    limitedText: 'Attendi qualche minuto, poi riprova.',
    errorTitle: 'Si è verificato un errore',
    errorText: 'Riprova tra un momento.',
  },
};
