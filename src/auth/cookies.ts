/** The session cookie (contract: Session cookie). */
export const SESSION_COOKIE = 'svc_session';
/** The cookie holding the CSRF token bound to the session (contract: CSRF token). */
export const CSRF_COOKIE = 'svc_csrf';
/** The request header that must repeat the CSRF cookie's value. */
export const CSRF_HEADER = 'x-csrf-token';
