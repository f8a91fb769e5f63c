// Portuguese messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// European Portuguese as a Portuguese bank writes to cardholders ("o seu cartão", "contacte"),
// with wording chosen to read naturally in Brazil too where a neutral form exists ("endereço",
// "no dia", "saiu para entrega"). Dates read "no dia 24 de novembro", "entre 24 e 26 de novembro".
// `other` in a confidence select is the Low wording: an estimate that is less precise.
import type { Catalog } from './catalog.js';

const LOW = 'mas esta estimativa é menos precisa para a sua região';
const SUPPORT = 'Contacte o apoio ao cliente';

export const pt: Catalog = {
  when:
    '{shape, select, ' +
    'single {no dia {maxDay} de {maxMonth}} ' +
    'sameMonth {entre {minDay} e {maxDay} de {maxMonth}} ' +
    'other {entre {minDay} de {minMonth} e {maxDay} de {maxMonth}}}',

  dispatched:
    'O seu cartão foi enviado. {confidence, select, ' +
    'High {Deverá chegar {when}.} ' +
    'Medium {Muito provavelmente chegará {when}.} ' +
    `other {Deverá chegar {when}, ${LOW}.}}`,

  in_transit:
    'O seu cartão está a caminho. {confidence, select, ' +
    'High {Deverá chegar {when}.} ' +
    'Medium {Muito provavelmente chegará {when}.} ' +
    `other {Deverá chegar {when}, ${LOW}.}}`,

  out_for_delivery:
    'O seu cartão saiu para entrega {confidence, select, ' +
    'High {e deverá chegar {when}.} ' +
    'Medium {e muito provavelmente chegará {when}.} ' +
    `other {e deverá chegar {when}, ${LOW}.}}`,

  delivered: 'O seu cartão foi entregue {when}. Ative-o para começar a utilizá-lo.',

  exception: {
    failed_attempt:
      `Não foi possível entregar o seu cartão. ${SUPPORT} para combinar uma nova entrega, ` +
      '{confidence, select, High {que deverá ocorrer {when}} Medium {muito provavelmente {when}} other {possivelmente {when}}}.',
    postal_delay:
      'O seu cartão sofreu um atraso nos correios {confidence, select, ' +
      'High {e deverá agora chegar {when}} ' +
      'Medium {e muito provavelmente chegará {when}} ' +
      'other {e poderá chegar {when}, mas esta estimativa é menos precisa}}. ' +
      `${SUPPORT} se precisar dele mais cedo.`,
    address_issue: `Há um problema com o endereço de entrega do seu cartão. ${SUPPORT} para o corrigir.`,
    damaged: `O seu cartão ficou danificado durante o envio. ${SUPPORT} para pedir um cartão novo.`,
    lost: `Tudo indica que o seu cartão se perdeu durante o envio. ${SUPPORT} para pedir um cartão novo.`,
    returned: `O seu cartão foi devolvido ao remetente. ${SUPPORT} para combinar um novo envio.`,
    other: `Ocorreu um problema com a entrega do seu cartão. ${SUPPORT} para obter ajuda.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `O seu cartão não chegou dentro do prazo previsto. ${SUPPORT} para verificar o envio ou pedir um cartão novo.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Entrega do seu cartão',
    statusHeading: 'Estado da entrega',
    stepDone: 'concluído',
    stepCurrent: 'passo atual',
    stepNext: 'ainda não',
    steps: { dispatched: 'Enviado', in_transit: 'Em trânsito', out_for_delivery: 'Em entrega', delivered: 'Entregue' },
    exceptionHeading: 'Há um problema com a entrega',
    reasons: {
      failed_attempt: 'Tentativa de entrega falhada',
      postal_delay: 'Atraso nos correios',
      address_issue: 'Problema com a morada',
      damaged: 'Danificado durante o transporte',
      lost: 'Perdido durante o transporte',
      returned: 'Devolvido ao remetente',
      other: 'Problema na entrega',
      overdue: 'Mais tarde do que o previsto',
    },
    windowHeading: 'Entrega prevista',
    deliveredHeading: 'Entregue em',
    activate: 'Ativar o seu cartão',
    contactSupport: 'Contactar o apoio ao cliente',
    callSupport: 'Ligar para o apoio ao cliente: {phone}',
    timelineHeading: 'Histórico',
    timelineEmpty: 'Ainda sem leituras da transportadora.',
    lastUpdated: 'Última atualização: {time}',
    languages: 'Outros idiomas',
    gateIntro: 'Para ver onde está o seu cartão, introduza o código postal da morada de entrega.',
    postalCode: 'Código postal',
    gateSubmit: 'Ver o estado da entrega',
    gateWrong: 'Esse código postal não corresponde. Verifique-o e tente novamente.',
    notFoundTitle: 'Link não encontrado',
    notFoundText: 'Este link de seguimento não existe. Verifique se abriu o link completo da sua mensagem.',
    erasedTitle: 'Seguimento apagado',
    erasedText:
      'O seguimento deste cartão foi apagado a pedido do emissor do cartão; nada dele é guardado. Para notícias do seu cartão, contacte o emissor.',
    goneTitle: 'Este link expirou',
    goneText: 'Para saber do seu cartão, contacte o emissor do seu cartão.',
    limitedTitle: 'Demasiadas tentativas',
    limitedText: 'Aguarde alguns minutos e tente novamente.',
    errorTitle: 'Algo correu mal',
    errorText: 'Tente novamente daqui a pouco.',
  },
};
