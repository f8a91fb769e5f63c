// Polish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "Ty" with the capitalised "Twoja", as Polish banks do. Month names
// come from Intl in the genitive that a date needs ("24 listopada"); ranges read
// "między 24 a 26 listopada". `other` in a confidence select is the Low wording.
import type { Catalog } from './index.js';

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
};
