// The person at the browser, for `cargo xtask interop`'s OAuth rows: opens
// the authorization URL `mcp login` printed, signs in and consents on
// oidc-provider's development pages by posting their forms, and follows the
// redirects to the CLI's loopback listener, as a browser would.
//
//   node browser.mjs AUTHORIZATION_URL [LOGIN]
//
// Prints each step on stderr; exits 0 once the CLI's listener answered 200.

const [start, login = 'ada'] = process.argv.slice(2);
if (!start) {
  console.error('usage: node browser.mjs AUTHORIZATION_URL [LOGIN]');
  process.exit(2);
}

const authorizationServer = new URL(start).origin;
const cookies = new Map();
const say = (line) => console.error(`browser: ${line}`);

async function visit(url, form) {
  const headers = { accept: 'text/html' };
  if (new URL(url).origin === authorizationServer && cookies.size) {
    headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  let body;
  if (form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(form).toString();
  }
  const response = await fetch(url, {
    method: form ? 'POST' : 'GET',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
    else cookies.set(name, value);
  }
  say(`${form ? 'POST' : 'GET'} ${new URL(url).pathname} -> ${response.status}`);
  return response;
}

// The one form of a development interaction page: its action and fields.
function formOf(html, base) {
  const form = html.match(/<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i);
  if (!form) return null;
  const fields = {};
  for (const input of form[2].matchAll(/<input([^>]*)>/gi)) {
    const name = input[1].match(/name="([^"]+)"/)?.[1];
    const value = input[1].match(/value="([^"]*)"/)?.[1] ?? '';
    if (name) fields[name] = value;
  }
  const action = form[1].replaceAll('&amp;', '&');
  return { action: new URL(action, base).href, fields };
}

let url = start;
let form;
for (let step = 0; step < 20; step += 1) {
  const response = await visit(url, form);
  form = undefined;
  const location = response.headers.get('location');
  if (response.status >= 300 && response.status < 400 && location) {
    url = new URL(location, url).href;
    continue;
  }
  const html = await response.text();
  if (new URL(url).origin !== authorizationServer) {
    // The redirect reached the application's listener.
    if (response.status === 200) {
      say('the application has the redirect');
      process.exit(0);
    }
    say(`the application answered ${response.status}: ${html.slice(0, 200)}`);
    process.exit(1);
  }
  if (response.status !== 200) {
    say(`the authorization server answered ${response.status}: ${html.replace(/<[^>]+>/g, ' ').slice(0, 400)}`);
    process.exit(1);
  }
  const page = formOf(html, url);
  if (!page) {
    say(`a page with no form: ${html.replace(/<[^>]+>/g, ' ').slice(0, 400)}`);
    process.exit(1);
  }
  if (page.fields.prompt === 'login') {
    // Development interactions take any login and password.
    form = { ...page.fields, login, password: 'interop' };
  } else {
    form = page.fields;
  }
  say(`filling in the ${page.fields.prompt ?? 'unnamed'} page`);
  url = page.action;
}
say('too many steps');
process.exit(1);
