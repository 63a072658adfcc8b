// A TCP proxy in front of a host, which can freeze the connections it carries: they stay open
// but nothing goes through any more, as when a network drops a connection without closing it.

import { connect, createServer } from "node:net";

export class FreezingProxy {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.pairs = new Set();
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, "127.0.0.1");
      const pair = { client, upstream, frozen: false };
      this.pairs.add(pair);
      client.on("data", (data) => pair.frozen || upstream.write(data));
      upstream.on("data", (data) => pair.frozen || client.write(data));
      const end = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on("close", end).on("error", end);
      upstream.on("close", end).on("error", end);
    });
  }

  /** Listen on a free loopback port; the URL to give askers is `url(token)`. */
  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = this.server.address().port;
    return this;
  }

  url(token) {
    return `http://127.0.0.1:${this.port}/?token=${encodeURIComponent(token)}`;
  }

  /** Stop forwarding on every open connection, without closing any; new ones work. */
  freeze() {
    for (const pair of this.pairs) pair.frozen = true;
    return this.pairs.size;
  }

  async close() {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}
