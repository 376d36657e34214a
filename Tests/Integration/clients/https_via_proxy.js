// An HTTPS request through the proxy named by HTTPS_PROXY, the way a Node program does it
// by hand: Node 18 and 20 do not honour HTTPS_PROXY themselves. CONNECT with
// http.request (Proxy-Authorization from the proxy URL's user and password), then
// https.request over the socket the proxy hands back, trusting the default roots plus
// NODE_EXTRA_CA_CERTS, which Node reads at start.
//
//   node https_via_proxy.js URL [METHOD [BODY]]
//
// Prints the answer's body on stdout and its status on stderr; exits 0 for a 2xx answer,
// 1 for another status, 2 when the proxy refuses the CONNECT, 3 on an error.
'use strict';
const http = require('http');
const https = require('https');
const tls = require('tls');

const target = new URL(process.argv[2]);
const method = process.argv[3] || 'GET';
const body = process.argv[4];
const proxyText = process.env.HTTPS_PROXY || process.env.https_proxy;
if (!proxyText) {
  console.error('HTTPS_PROXY is not set');
  process.exit(3);
}
const proxy = new URL(proxyText);
const authority = `${target.hostname}:${target.port || 443}`;

const connectHeaders = { Host: authority };
if (proxy.username || proxy.password) {
  const pair = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  connectHeaders['Proxy-Authorization'] = 'Basic ' + Buffer.from(pair).toString('base64');
}

function fail(error) {
  console.error(`error: ${error.message}`);
  process.exit(3);
}

const connect = http.request({
  host: proxy.hostname, port: proxy.port || 80, method: 'CONNECT', path: authority, headers: connectHeaders,
});
connect.on('error', fail);
connect.on('connect', (answer, socket) => {
  if (answer.statusCode !== 200) {
    console.error(`CONNECT ${authority}: ${answer.statusCode}`);
    process.exit(2);
  }
  const headers = {};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(body);
  }
  const request = https.request({
    host: target.hostname, port: target.port || 443, method, path: target.pathname + target.search, headers,
    // No agent: with none, https.request takes its socket from createConnection.
    createConnection: () => tls.connect({ socket, servername: target.hostname }),
  }, (response) => {
    const chunks = [];
    response.on('data', (chunk) => chunks.push(chunk));
    response.on('end', () => {
      process.stdout.write(Buffer.concat(chunks));
      console.error(`status ${response.statusCode}`);
      socket.destroy();
      process.exit(response.statusCode >= 200 && response.statusCode < 300 ? 0 : 1);
    });
  });
  request.on('error', fail);
  request.end(body);
});
connect.end();
