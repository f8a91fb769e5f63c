// The dashboard's navigation, in the order the header shows it. A new page adds its entry here.
export const DASHBOARD_PREFIX = '/dashboard';

export const NAV = [
  { label: 'Webhooks', href: `${DASHBOARD_PREFIX}/webhooks` },
  { label: 'Delivery log', href: `${DASHBOARD_PREFIX}/deliveries` },
  { label: 'API keys', href: `${DASHBOARD_PREFIX}/api-keys` },
  { label: 'Dispatches', href: `${DASHBOARD_PREFIX}/dispatches` },
  { label: 'Prediction quality', href: `${DASHBOARD_PREFIX}/prediction-quality` },
  { label: 'Tracking page', href: `${DASHBOARD_PREFIX}/settings/tracking-page` },
  { label: 'Tracking feeds', href: `${DASHBOARD_PREFIX}/settings/tracking-feeds` },
] as const;

/** Where `/dashboard` and a successful sign-in lead. */
export const HOME = `${DASHBOARD_PREFIX}/webhooks`;
