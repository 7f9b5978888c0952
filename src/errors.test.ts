import { describe, expect, it } from 'vitest';

import { dependencyError } from './errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('dependencyError', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED'), 'UNAVAILABLE', 'database'],
    ['a reset connection', withCode('ECONNRESET'), 'UNAVAILABLE', 'database'],
    [
      'pg: connection ended',
      new Error('Connection terminated unexpectedly'),
      'UNAVAILABLE',
      'database',
    ],
    ['pg: terminated backend', withCode('57P01'), 'UNAVAILABLE', 'database'],
    ['pg: cannot connect now', withCode('57P03'), 'UNAVAILABLE', 'database'],
    ['pg: connection exception', withCode('08006'), 'UNAVAILABLE', 'database'],
    ['pg: disk full', withCode('53100'), 'UNAVAILABLE', 'database'],
    ['pg: statement_timeout', withCode('57014'), 'TIMEOUT', 'database'],
    ['pg: pool wait', new Error('timeout exceeded when trying to connect'), 'TIMEOUT', 'database'],
    ['pg: read timeout', new Error('Query read timeout'), 'TIMEOUT', 'database'],
    ['SQLite: disk full', withCode('SQLITE_FULL'), 'UNAVAILABLE', 'disk'],
    ['SQLite: I/O error', withCode('SQLITE_IOERR_WRITE'), 'UNAVAILABLE', 'disk'],
    ['SQLite: locked by another process', withCode('SQLITE_BUSY'), 'TIMEOUT', 'database'],
    ['Redis: command timeout', new Error('Command timed out'), 'TIMEOUT', 'redis'],
    ['Redis: closed', new Error('Connection is closed.'), 'UNAVAILABLE', 'redis'],
    [
      'Redis: down when the command was issued',
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      'UNAVAILABLE',
      'redis',
    ],
    ['SMTP: cannot connect', withCode('ECONNECTION'), 'UNAVAILABLE', 'smtp'],
    [
      'a wrapped cause',
      new Error('outer', { cause: withCode('ECONNREFUSED') }),
      'UNAVAILABLE',
      'database',
    ],
  ])('%s', (_name, err, code, dependency) => {
    expect(dependencyError(err)).toMatchObject({ code, dependency, cause: err });
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['text PostgreSQL refuses', withCode('22021')],
    ['a SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a plain fault', new TypeError('undefined is not a function')],
    ['not an error', 'text'],
  ])('leaves %s alone', (_name, err) => {
    expect(dependencyError(err)).toBeNull();
  });
});
