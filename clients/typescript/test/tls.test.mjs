// An https host whose certificate a private authority signed: trusted with `ca`, refused at once
// without it (retrying could not change a certificate).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { RemoteProvider } from "user-questions-client";

import { Host, rejectionOf, sessionName } from "./helpers/host.mjs";

/** A private certificate authority and a certificate it signed for 127.0.0.1, made with openssl. */
function certificates(dir) {
  const run = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=user-questions test CA");
  run("req", ...ec, "-keyout", "host.key", "-out", "host.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(
    join(dir, "host.ext"),
    "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
  );
  run("x509", "-req", "-in", "host.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "host.pem",
    "-days", "2", "-extfile", "host.ext");
  return { ca: join(dir, "ca.pem"), cert: join(dir, "host.pem"), key: join(dir, "host.key") };
}

describe("an https host", () => {
  const dir = mkdtempSync(join(tmpdir(), "uq-ts-tls-"));
  const files = certificates(dir);
  const host = new Host({ name: "tls", args: ["--tls-cert", files.cert, "--tls-key", files.key], ca: readFileSync(files.ca) });
  before(() => host.start());
  after(async () => {
    await host.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test("is asked over wss with its authority given as { ca }", { timeout: 30_000 }, async () => {
    assert.match(host.askerUrl, /^https:/);
    const session = sessionName("tls");
    const provider = new RemoteProvider(host.askerUrl, { session, ca: files.ca });
    const asked = provider.ask({ questions: [{ id: "ok", question: "Over TLS?" }] });
    const { rpcId } = await host.pendingOf(session);
    await host.answer(rpcId, [{ id: "ok", selected: [], custom: "yes" }]);
    assert.deepEqual(await asked, { answers: [{ id: "ok", selected: [], custom: "yes" }] });
  });

  test("without its authority, the certificate is refused at once with HOST_UNREACHABLE", { timeout: 30_000 }, async () => {
    const saved = process.env.SSL_CERT_FILE;
    delete process.env.SSL_CERT_FILE;
    try {
      const provider = new RemoteProvider(host.askerUrl);
      const { error, ms } = await rejectionOf(provider.ask({ questions: [{ id: "ok", question: "Over TLS?" }] }));
      assert.equal(error.code, "HOST_UNREACHABLE");
      assert.match(error.message, /cannot be verified/);
      assert.match(error.message, /pass its certificate as \{ ca \}/);
      assert.ok(ms < 5_000, `refused after ${ms} ms`);
    } finally {
      if (saved !== undefined) process.env.SSL_CERT_FILE = saved;
    }
  });
});
