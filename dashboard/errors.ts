// Errors of the dashboard as values: a handler throws a PageError and dashboard/index.ts renders it
// as an HTML page with its status (never the API's JSON error body).
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'PageError';
  }
}

/** The answer for anything that does not exist *or belongs to another issuer*: the two look alike. */
export const pageNotFound = () => new PageError(404, 'Not found', 'There is nothing here. It may have been removed, or the link is wrong.');

export const csrfRejected = () =>
  new PageError(403, 'Form expired', 'This form has expired or did not come from this dashboard. Go back, reload the page and try again.');
