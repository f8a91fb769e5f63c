// The path of a request as logs and traces may show it: a tracking page's token is a credential
// (docs/tracking-page.md "The page"), so `/t/<token>` becomes `/t/…`; every other path is unchanged.
const TRACKING_PAGE = /^\/t\/(?!assets\/).+/;

export function loggablePath(path: string): string {
  return TRACKING_PAGE.test(path) ? '/t/…' : path;
}
