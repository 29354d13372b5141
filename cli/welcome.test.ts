import { expect } from 'chai';
import { loadDevConfig } from '../kernel/config/config.js';
import { welcomeText } from './welcome.js';

const servers = [{ name: 'auth', url: 'http://127.0.0.1:8080' }];
const created = { created: true, email: 'admin@didyma.local', workspace: 'default' };

/** The login example's JSON body, as the shell would pass it. */
function loginBody(text: string): string | undefined {
  return /-d '(\{"email".*\})'$/m.exec(text)?.[1];
}

describe('the welcome of `didyma dev`', () => {
  it('names a generated password in the login example', () => {
    const text = welcomeText(loadDevConfig({}), servers, { ...created, generatedPassword: 'Gen-Pass-42x' }, 'http://127.0.0.1:8090');
    expect(text).to.include('password Gen-Pass-42x  (generated: shown only now)');
    expect(JSON.parse(loginBody(text)!)).to.deep.equal({ email: 'admin@didyma.local', password: 'Gen-Pass-42x', workspace: 'default' });
    expect(text).to.not.include('<password>');
    expect(text, 'where to try the API').to.include('to try: http://127.0.0.1:8080/docs');
  });

  it('names the variable that set the password, for the shell to expand', () => {
    const text = welcomeText(loadDevConfig({ DIDYMA_ADMIN_PASSWORD: 'Given-Pass-42' }), servers, created, 'http://127.0.0.1:8090');
    expect(loginBody(text)).to.equal(`{"email":"admin@didyma.local","password":"'"$DIDYMA_ADMIN_PASSWORD"'","workspace":"default"}`);
    expect(text, 'the value itself stays out of the terminal').to.not.include('Given-Pass-42');
  });

  it('says where metric queries go, or that they are off and how to turn them on', () => {
    const on = welcomeText(loadDevConfig({ PROMETHEUS_URL: 'http://127.0.0.1:59091' }), servers, created, 'http://127.0.0.1:8090');
    expect(on).to.include('metric queries from Prometheus at http://127.0.0.1:59091');
    const off = welcomeText(loadDevConfig({}), servers, created, 'http://127.0.0.1:8090');
    expect(off).to.include('metric queries off: PROMETHEUS_URL is not set (`make run` starts a Prometheus');
  });

  it('on a later start, says how to set a new password when it is no longer known', () => {
    const text = welcomeText(loadDevConfig({}), servers, { ...created, created: false }, 'http://127.0.0.1:8090');
    expect(text).to.include('"password":"<password>"');
    expect(text).to.include('npx didyma admin reset-password admin@didyma.local');
  });
});
