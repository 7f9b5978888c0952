/** Audit log entries per page: the default and the most a caller may ask for. */
export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;
