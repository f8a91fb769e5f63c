// Spanish messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Addresses the cardholder as "tú", as Spanish banks do in their apps; vocabulary neutral enough
// for Latin America. Dates read "el 24 de noviembre", "entre el 24 y el 26 de noviembre".
// `other` in a confidence select is the Low wording: an estimate that is less precise.
import type { Catalog } from './catalog.js';

const LOW = 'aunque esta estimación es menos precisa para tu zona';
const SUPPORT = 'Ponte en contacto con atención al cliente';

export const es: Catalog = {
  when:
    '{shape, select, ' +
    'single {el {maxDay} de {maxMonth}} ' +
    'sameMonth {entre el {minDay} y el {maxDay} de {maxMonth}} ' +
    'other {entre el {minDay} de {minMonth} y el {maxDay} de {maxMonth}}}',

  dispatched:
    'Ya hemos enviado tu tarjeta. {confidence, select, ' +
    'High {Debería llegarte {when}.} ' +
    'Medium {Lo más probable es que te llegue {when}.} ' +
    `other {Debería llegarte {when}, ${LOW}.}}`,

  in_transit:
    'Tu tarjeta está en camino. {confidence, select, ' +
    'High {Debería llegarte {when}.} ' +
    'Medium {Lo más probable es que te llegue {when}.} ' +
    `other {Debería llegarte {when}, ${LOW}.}}`,

  out_for_delivery:
    'Tu tarjeta está en reparto {confidence, select, ' +
    'High {y debería llegarte {when}.} ' +
    'Medium {y lo más probable es que te llegue {when}.} ' +
    `other {y debería llegarte {when}, ${LOW}.}}`,

  delivered: 'Tu tarjeta se entregó {when}. Actívala para empezar a usarla.',

  exception: {
    failed_attempt:
      `No se ha podido entregar tu tarjeta. ${SUPPORT} para acordar una nueva entrega, ` +
      '{confidence, select, High {que debería realizarse {when}} Medium {muy probablemente {when}} other {posiblemente {when}}}.',
    postal_delay:
      'El envío de tu tarjeta se ha retrasado por una incidencia postal {confidence, select, ' +
      'High {y ahora debería llegarte {when}} ' +
      'Medium {y lo más probable es que te llegue {when}} ' +
      'other {y podría llegarte {when}, aunque esta estimación es menos precisa}}. ' +
      `${SUPPORT} si la necesitas antes.`,
    address_issue: `Hay un problema con la dirección de entrega de tu tarjeta. ${SUPPORT} para corregirla.`,
    damaged: `Tu tarjeta se ha dañado durante el envío. ${SUPPORT} para pedir una tarjeta nueva.`,
    lost: `Parece que tu tarjeta se ha perdido durante el envío. ${SUPPORT} para pedir una tarjeta nueva.`,
    returned: `Tu tarjeta se ha devuelto al remitente. ${SUPPORT} para gestionar un nuevo envío.`,
    other: `Ha surgido un problema con la entrega de tu tarjeta. ${SUPPORT} para que podamos ayudarte.`,
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: `Tu tarjeta no ha llegado en el plazo previsto. ${SUPPORT} para comprobar qué ha pasado o pedir una tarjeta nueva.`,
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Entrega de su tarjeta',
    statusHeading: 'Estado de la entrega',
    stepDone: 'completado',
    stepCurrent: 'paso actual',
    stepNext: 'pendiente',
    steps: { dispatched: 'Enviada', in_transit: 'En tránsito', out_for_delivery: 'En reparto', delivered: 'Entregada' },
    exceptionHeading: 'Hay un problema con la entrega',
    reasons: {
      failed_attempt: 'Intento de entrega fallido',
      postal_delay: 'Retraso en el correo',
      address_issue: 'Problema con la dirección',
      damaged: 'Dañada durante el transporte',
      lost: 'Perdida durante el transporte',
      returned: 'Devuelta al remitente',
      other: 'Problema de entrega',
      overdue: 'Más tarde de lo previsto',
    },
    windowHeading: 'Entrega prevista',
    deliveredHeading: 'Entregada el',
    activate: 'Activar su tarjeta',
    contactSupport: 'Contactar con atención al cliente',
    callSupport: 'Llamar a atención al cliente: {phone}',
    timelineHeading: 'Historial',
    timelineEmpty: 'Todavía no hay escaneos del transportista.',
    lastUpdated: 'Última actualización: {time}',
    languages: 'Otros idiomas',
    gateIntro: 'Para ver dónde está su tarjeta, introduzca el código postal de la dirección de entrega.',
    postalCode: 'Código postal',
    gateSubmit: 'Ver el estado de la entrega',
    gateWrong: 'Ese código postal no coincide. Compruébelo e inténtelo de nuevo.',
    notFoundTitle: 'Enlace no encontrado',
    notFoundText: 'Este enlace de seguimiento no existe. Compruebe que ha abierto el enlace completo de su mensaje.',
    erasedTitle: 'Seguimiento eliminado',
    erasedText:
      'El seguimiento de esta tarjeta se eliminó a petición de su emisor; no se conserva nada de él. Para saber de su tarjeta, contacte con su emisor.',
    goneTitle: 'Este enlace ha caducado',
    goneText: 'Para saber de su tarjeta, contacte con el emisor de su tarjeta.',
    limitedTitle: 'Demasiados intentos',
    limitedText: 'Espere unos minutos y vuelva a intentarlo.',
    errorTitle: 'Algo ha fallado',
    errorText: 'Vuelva a intentarlo en un momento.',
  },
};
