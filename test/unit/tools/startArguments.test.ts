/** The options of `npm start --`, as Core Tools' `func start` takes them. */
import { parseStartArguments, StartArgumentError } from '../../../tools/startArguments';

describe('parseStartArguments', () => {
  it.each<[string[], object]>([
    [[], { useHttps: false }],
    [['--useHttps'], { useHttps: true }],
    [['--useHttps', '--cert', 'app.pfx', '--password', 'p@ss'], { useHttps: true, cert: 'app.pfx', password: 'p@ss' }],
    [['--useHttps', '--cert=app.pfx', '--password=-starts-with-a-dash'], { useHttps: true, cert: 'app.pfx', password: '-starts-with-a-dash' }],
    [['--port', '7072'], { useHttps: false, port: 7072 }],
    [['-p', '0'], { useHttps: false, port: 0 }],
  ])('reads %j', (args, expected) => {
    expect(parseStartArguments(args)).toEqual(expect.objectContaining(expected));
  });

  it.each<[string, string[], RegExp]>([
    ['--cert without --password', ['--useHttps', '--cert', 'app.pfx'], /--cert needs --password/],
    ['--password without --cert', ['--useHttps', '--password', 'x'], /--password needs --cert/],
    ['--cert without --useHttps', ['--cert', 'app.pfx', '--password', 'x'], /for use with --useHttps/],
    ['--port that is no port', ['--port', '70000'], /--port must be a port number/],
    ['--port with no value', ['--port'], /--port needs a value/],
    ['--useHttps with a value', ['--useHttps=yes'], /--useHttps takes no value/],
    ['an unknown option', ['--usehttps'], /Unknown option --usehttps/],
  ])('refuses %s, with the usage', (_title, args, message) => {
    expect(() => parseStartArguments(args)).toThrow(StartArgumentError);
    expect(() => parseStartArguments(args)).toThrow(message);
    expect(() => parseStartArguments(args)).toThrow(/Usage: npm start --/);
  });

  it.each([
    [['--pasword', 'CANARY-SECRET-typed'], /Unknown option --pasword/],
    [['--pasword=CANARY-SECRET-typed'], /Unknown option --pasword/],
    [['--useHttps', 'CANARY-SECRET-typed'], /Unexpected argument number 2/],
  ])('never repeats what was typed after a mistyped option: %j', (args, message) => {
    let caught: unknown;
    try {
      parseStartArguments(args);
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('CANARY-SECRET');
  });
});
