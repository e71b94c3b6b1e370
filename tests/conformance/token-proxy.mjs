// The conformance suite cannot send a header, and `cowork mcp serve --http` refuses a request
// without its token: this forwards each request to the server with the token added, streaming
// both ways, and changes nothing else (Host and Origin pass through, so the DNS-rebinding
// checks still reach the server). Test-only; listens on 127.0.0.1.
// Usage: node token-proxy.mjs <listen-port> <target-url> <token>
import http from "node:http";

const [port, target, token] = process.argv.slice(2);
const upstream = new URL(target);

http
  .createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    out.on("error", (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(out);
  })
  .listen(Number(port), "127.0.0.1");
