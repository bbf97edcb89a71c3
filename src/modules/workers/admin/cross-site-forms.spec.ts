import { sentByScript } from './cross-site-forms.js';

describe('sentByScript', () => {
  it.each([
    ['GET', {}, true],
    ['HEAD', {}, true],
    ['OPTIONS', {}, true],
    ['POST', { 'content-type': 'application/json' }, true],
    ['POST', { 'content-type': 'application/json; charset=utf-8' }, true],
    ['POST', { 'content-type': 'Application/JSON' }, true],
    ['POST', { 'content-type': 'application/merge-patch+json' }, true],
    ['DELETE', { 'x-requested-with': 'XMLHttpRequest' }, true],
    ['POST', { 'content-type': 'text/plain', 'x-requested-with': 'tb' }, true],
    ['POST', {}, false],
    ['DELETE', {}, false],
    ['POST', { 'content-type': 'application/x-www-form-urlencoded' }, false],
    ['POST', { 'content-type': 'multipart/form-data; boundary=x' }, false],
    ['POST', { 'content-type': 'text/plain;charset=UTF-8' }, false],
    ['POST', { 'content-type': 'text/plain; application/json' }, false],
    ['POST', { 'content-type': 'application/jsonp' }, false],
    ['POST', { 'x-requested-with': '' }, false],
  ])('%s with %j: %s', (method, headers, expected) => {
    expect(sentByScript(method, headers)).toBe(expected);
  });
});
