// Polish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "Ty" with the capitalised "Twoja", as Polish banks do. Month names
// come from Intl in the genitive that a date needs ("24 listopada"); ranges read
// "między 24 a 26 listopada". `other` in a confidence select is the Low wording.
import type { Catalog } from './catalog.js';

const LOW = 'ale w Twojej okolicy ten termin jest mniej pewny';
const SUPPORT = 'Skontaktuj się z obsługą klienta';

export const pl: Catalog = {
  when:
    '{shape, select, ' +
    'single {{maxDay} {maxMonth}} ' +
    'sameMonth {między {minDay} a {maxDay} {maxMonth}} ' +
    'other {między {minDay} {minMonth} a {maxDay} {maxMonth}}}',

  dispatched:
    'Twoja karta została wysłana. {confidence, select, ' +
    'High {Powinna dotrzeć {when}.} ' +
    'Medium {Najprawdopodobniej dotrze {when}.} ' +
    `other {Powinna dotrzeć {when}, ${LOW}.}}`,

  in_transit:
    'Twoja karta jest w drodze. {confidence, select, ' +
    'High {Powinna dotrzeć {when}.} ' +
    'Medium {Najprawdopodobniej dotrze {when}.} ' +
    `other {Powinna dotrzeć {when}, ${LOW}.}}`,

  out_for_delivery:
    'Twoja karta została wydana do doręczenia {confidence, select, ' +
    'High {i powinna dotrzeć {when}.} ' +
    'Medium {i najprawdopodobniej dotrze {when}.} ' +
    `other {i powinna dotrzeć {when}, ${LOW}.}}`,

  delivered: 'Twoja karta została doręczona {when}. Aktywuj ją, aby zacząć z niej korzystać.',

  exception: {
    failed_attempt:
      `Nie udało się doręczyć Twojej karty. ${SUPPORT}, aby umówić ponowne doręczenie, ` +
      '{confidence, select, High {które powinno nastąpić {when}} Medium {najprawdopodobniej {when}} other {być może {when}}}.',
    postal_delay:
      'Przesyłka z Twoją kartą jest opóźniona z powodu utrudnień na poczcie {confidence, select, ' +
      'High {i powinna teraz dotrzeć {when}} ' +
      'Medium {i najprawdopodobniej dotrze {when}} ' +
      'other {i może dotrzeć {when}, ale ten termin jest mniej pewny}}. ' +
      `${SUPPORT}, jeśli potrzebujesz karty wcześniej.`,
    address_issue: `Wystąpił problem z adresem doręczenia Twojej karty. ${SUPPORT}, aby go poprawić.`,
    damaged: `Twoja karta została uszkodzona podczas wysyłki. ${SUPPORT}, aby zamówić nową kartę.`,
    lost: `Wygląda na to, że Twoja karta zaginęła podczas wysyłki. ${SUPPORT}, aby zamówić nową kartę.`,
    returned: `Twoja karta została zwrócona do nadawcy. ${SUPPORT}, aby ustalić ponowną wysyłkę.`,
    other: `Wystąpił problem z doręczeniem Twojej karty. ${SUPPORT}, aby uzyskać pomoc.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Twoja karta nie dotarła w przewidywanym terminie. ${SUPPORT}, aby to sprawdzić lub zamówić nową kartę.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Dostawa Twojej karty',
    statusHeading: 'Status dostawy',
    stepDone: 'zakończono',
    stepCurrent: 'bieżący etap',
    stepNext: 'jeszcze nie',
    steps: { dispatched: 'Wysłana', in_transit: 'W drodze', out_for_delivery: 'W doręczeniu', delivered: 'Doręczona' },
    exceptionHeading: 'Wystąpił problem z dostawą',
    reasons: {
      failed_attempt: 'Nieudana próba doręczenia',
      postal_delay: 'Opóźnienie na poczcie',
      address_issue: 'Problem z adresem',
      damaged: 'Uszkodzona w transporcie',
      lost: 'Zagubiona w transporcie',
      returned: 'Zwrócona do nadawcy',
      other: 'Problem z dostawą',
      overdue: 'Później niż oczekiwano',
    },
    windowHeading: 'Przewidywana dostawa',
    deliveredHeading: 'Doręczona dnia',
    activate: 'Aktywuj kartę',
    contactSupport: 'Skontaktuj się z obsługą klienta',
    callSupport: 'Zadzwoń do obsługi klienta: {phone}',
    timelineHeading: 'Historia',
    timelineEmpty: 'Brak jeszcze skanów przewoźnika.',
    lastUpdated: 'Ostatnia aktualizacja: {time}',
    languages: 'Inne języki',
    gateIntro: 'Aby zobaczyć, gdzie jest Twoja karta, wpisz kod pocztowy adresu dostawy.',
    postalCode: 'Kod pocztowy',
    gateSubmit: 'Pokaż status dostawy',
    gateWrong: 'Ten kod pocztowy się nie zgadza. Sprawdź go i spróbuj ponownie.',
    notFoundTitle: 'Nie znaleziono linku',
    notFoundText: 'Ten link śledzenia nie istnieje. Sprawdź, czy otwarto cały link z wiadomości.',
    erasedTitle: 'Śledzenie usunięte',
    erasedText:
      'Śledzenie tej karty zostało usunięte na prośbę wydawcy karty; nic z niego nie jest przechowywane. Aby dowiedzieć się o swojej karcie, skontaktuj się z wydawcą.',
    goneTitle: 'Ten link wygasł',
    goneText: 'Aby uzyskać informacje o karcie, skontaktuj się z wydawcą karty.',
    limitedTitle: 'Zbyt wiele prób',
    limitedText: 'Odczekaj kilka minut i spróbuj ponownie.',
    errorTitle: 'Coś poszło nie tak',
    errorText: 'Spróbuj ponownie za chwilę.',
  },
};
