// `helm test`: logs in as the first staff user through the auth Service, then
// reads a list from each API server through its Service. It prints methods,
// paths, statuses and counts only: never the password or the token.
const { AUTH_URL, PRIVATE_URL, PUBLIC_URL, ADMIN_EMAIL, ADMIN_PASSWORD } = process.env;

async function call(method, url, init = {}) {
  const { pathname } = new URL(url);
  const response = await reach(method, url, init);
  console.log(`${method} ${pathname}: ${response.status}`);
  if (!response.ok) throw new Error(`${method} ${pathname} answered ${response.status}`);
  return response.json();
}

// A Service's endpoints reach the node's proxy a moment after its pods turn
// Ready; until then connections are refused, and no request was received.
async function reach(method, url, init) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fetch(url, { method, ...init, signal: AbortSignal.timeout(15_000) });
    } catch (error) {
      if (error.cause?.code !== 'ECONNREFUSED' || Date.now() > deadline) throw error;
      console.log(`${method} ${new URL(url).pathname}: connection refused, retrying`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

const { access } = await call('POST', `${AUTH_URL}/api/auth/token/obtain`, {
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD, workspace: 'default' }),
});
for (const url of [`${AUTH_URL}/api/auth/workspace`, `${PRIVATE_URL}/api/deployment`, `${PUBLIC_URL}/api/model`]) {
  const list = await call('GET', url, { headers: { authorization: `Bearer ${access}` } });
  if (!Array.isArray(list)) throw new Error(`GET ${new URL(url).pathname} did not answer a list`);
  console.log(`  ${list.length} item(s)`);
}
