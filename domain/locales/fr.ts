// French messages for ui_suggestion.recommended_message (ICU MessageFormat; arguments: see ./index.ts).
// Written for France and usable as is in Belgium, Switzerland, Canada and Africa; dates always read
// day first, with "1er" for the first of the month ("le 1er décembre").
// `other` in a confidence select is the Low wording: an estimate that is less reliable.
import type { Catalog } from './catalog.js';

const MIN_DAY = '{minDay, plural, =1 {1er} other {#}}';
const MAX_DAY = '{maxDay, plural, =1 {1er} other {#}}';

export const fr: Catalog = {
  when:
    '{shape, select, ' +
    `single {le ${MAX_DAY} {maxMonth}} ` +
    `sameMonth {entre le ${MIN_DAY} et le ${MAX_DAY} {maxMonth}} ` +
    `other {entre le ${MIN_DAY} {minMonth} et le ${MAX_DAY} {maxMonth}}}`,

  dispatched:
    'Votre carte a été expédiée. {confidence, select, ' +
    'High {Elle devrait arriver {when}.} ' +
    'Medium {Elle arrivera très probablement {when}.} ' +
    'other {Elle devrait arriver {when}, mais cette estimation est moins fiable pour votre secteur.}}',

  in_transit:
    'Votre carte est en route. {confidence, select, ' +
    'High {Elle devrait arriver {when}.} ' +
    'Medium {Elle arrivera très probablement {when}.} ' +
    'other {Elle devrait arriver {when}, mais cette estimation est moins fiable pour votre secteur.}}',

  out_for_delivery:
    'Votre carte est en cours de livraison {confidence, select, ' +
    'High {et devrait arriver {when}.} ' +
    'Medium {et arrivera très probablement {when}.} ' +
    'other {et devrait arriver {when}, mais cette estimation est moins fiable pour votre secteur.}}',

  delivered: 'Votre carte a été livrée {when}. Activez-la pour commencer à l’utiliser.',

  exception: {
    failed_attempt:
      'Le transporteur n’a pas pu livrer votre carte. Contactez le service client pour convenir d’une nouvelle livraison, ' +
      '{confidence, select, High {prévue {when}} Medium {très probablement {when}} other {peut-être {when}}}.',
    postal_delay:
      'Votre carte a pris du retard dans l’acheminement postal {confidence, select, ' +
      'High {et devrait désormais arriver {when}} ' +
      'Medium {et arrivera très probablement {when}} ' +
      'other {et pourrait arriver {when}, mais cette estimation est moins fiable}}. ' +
      'Contactez le service client si vous en avez besoin plus tôt.',
    address_issue: 'L’adresse de livraison de votre carte pose problème. Contactez le service client pour la corriger.',
    damaged: 'Votre carte a été endommagée pendant l’acheminement. Contactez le service client pour la faire remplacer.',
    lost: 'Votre carte semble avoir été perdue pendant l’acheminement. Contactez le service client pour la faire remplacer.',
    returned: 'Votre carte a été retournée à l’expéditeur. Contactez le service client pour convenir d’un nouvel envoi.',
    other: 'Un problème est survenu lors de la livraison de votre carte. Contactez le service client pour obtenir de l’aide.',
    // The service's own reason: no delivery scan long after the window (docs/states.md "Overdue").
    overdue: 'Votre carte n’est pas arrivée dans les délais prévus. Contactez le service client pour faire le point ou la faire remplacer.',
  },
  // The tracking page (api/tracking-page/): its headings, steps, reasons in a few words, and its ends.
  page: {
    title: 'Livraison de votre carte',
    statusHeading: 'État de la livraison',
    stepDone: 'terminé',
    stepCurrent: 'étape en cours',
    stepNext: 'à venir',
    steps: { dispatched: 'Expédiée', in_transit: 'En transit', out_for_delivery: 'En cours de livraison', delivered: 'Livrée' },
    exceptionHeading: 'La livraison rencontre un problème',
    reasons: {
      failed_attempt: 'Échec de la tentative de livraison',
      postal_delay: 'Retard postal',
      address_issue: 'Problème d’adresse',
      damaged: 'Endommagée pendant l’acheminement',
      lost: 'Perdue pendant l’acheminement',
      returned: 'Retournée à l’expéditeur',
      other: 'Problème de livraison',
      overdue: 'Plus tard que prévu',
    },
    windowHeading: 'Livraison prévue',
    deliveredHeading: 'Livrée le',
    activate: 'Activer votre carte',
    contactSupport: 'Contacter le service client',
    callSupport: 'Appeler le service client : {phone}',
    timelineHeading: 'Historique',
    timelineEmpty: 'Aucun passage chez le transporteur pour l’instant.',
    lastUpdated: 'Dernière mise à jour : {time}',
    languages: 'Autres langues',
    gateIntro: 'Pour suivre votre carte, saisissez le code postal de l’adresse de livraison.',
    postalCode: 'Code postal',
    gateSubmit: 'Afficher le suivi',
    gateWrong: 'Ce code postal ne correspond pas. Vérifiez-le et réessayez.',
    notFoundTitle: 'Lien introuvable',
    notFoundText: 'Ce lien de suivi n’existe pas. Vérifiez que vous avez ouvert le lien complet de votre message.',
    erasedTitle: 'Suivi effacé',
    erasedText:
      'Le suivi de cette carte a été effacé à la demande de votre émetteur ; rien n’en est conservé. Pour des nouvelles de votre carte, contactez votre émetteur.',
    goneTitle: 'Ce lien a expiré',
    goneText: 'Pour des nouvelles de votre carte, contactez l’émetteur de votre carte.',
    limitedTitle: 'Trop de tentatives',
    limitedText: 'Patientez quelques minutes, puis réessayez.',
    errorTitle: 'Une erreur est survenue',
    errorText: 'Réessayez dans un instant.',
  },
};
