import type { FastifyReply } from 'fastify';

import type { ApiRoutes } from '../trees/api.js';

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

function html(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; form-action 'self'")
    .type('text/html; charset=utf-8')
    .send(page(title, body));
}

/**
 * The unsubscribe link of notification digests (docs/notifications.md, "Mail digests"); it works
 * without signing in, authorized by the signed token in the link. GET shows a button (mail
 * scanners fetch links, and a GET must change nothing); POST turns the digests off, and is also
 * what a mail client's one-click unsubscribe (RFC 8058) sends.
 */
export const notificationRoutes: ApiRoutes = (api, ctx) => {
  api.get<{ Querystring: { token?: string } }>(
    '/notifications/unsubscribe',
    async (request, reply) => {
      if (!ctx.services.digests.verifyToken(request.query.token)) {
        return html(reply, 400, 'Link not valid', '<p>This unsubscribe link is not valid.</p>');
      }
      const action = `?token=${encodeURIComponent(request.query.token as string)}`;
      return html(
        reply,
        200,
        'Stop notification mails',
        `<p>Stop mail digests of unread notifications?</p>
<form method="post" action="${action.replace(/"/g, '&quot;')}"><button type="submit">Unsubscribe</button></form>`,
      );
    },
  );
  void api.register(async (child) => {
    // A form post (the page's button, or RFC 8058's `List-Unsubscribe=One-Click`): only the
    // token in the query string matters.
    child.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 },
      (_req, body, done) => done(null, body),
    );
    child.post<{ Querystring: { token?: string } }>(
      '/notifications/unsubscribe',
      async (request, reply) => {
        if (!(await ctx.services.digests.unsubscribe(request.query.token))) {
          return html(reply, 400, 'Link not valid', '<p>This unsubscribe link is not valid.</p>');
        }
        return html(
          reply,
          200,
          'Unsubscribed',
          '<p>You will get no more notification mails. Turn them back on in your notification settings.</p>',
        );
      },
    );
  });
};
