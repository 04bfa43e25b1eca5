/**
 * The TLS material of the options, checked when the client is built rather than at the first
 * handshake: certificate files read (`caFile`, `certFile`, `keyFile`), the client key matched
 * against its certificate, the client certificate's validity dates. Every failure is reason
 * `Config` naming the field (and a file's path), never the key or certificate itself.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import type * as Tls from "node:tls"
import * as NodeTls from "node:tls"
import { Config as ConfigReason, RedisError } from "../RedisError.ts"
import type { TlsOptions } from "../RedisOptions.ts"

const configError = (field: string, message: string): RedisError =>
  new RedisError({ reason: new ConfigReason({ field, message }) })

const readFile = (field: string, path: string): Buffer | RedisError => {
  try {
    return Fs.readFileSync(path)
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? "unreadable"
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code
    return configError(field, `cannot read ${field} "${path}": ${why} (${code})`)
  }
}

/** A certificate or key option as a single value (Node accepts arrays; the checks look at the first). */
const first = (value: Tls.ConnectionOptions["cert"]): string | Buffer | undefined => {
  const one = Array.isArray(value) ? value[0] : value
  if (one === undefined) return undefined
  return typeof one === "string" || Buffer.isBuffer(one) ? one : undefined
}

/** The client certificate's validity, now. */
const checkDates = (cert: string | Buffer): RedisError | undefined => {
  let certificate: Crypto.X509Certificate
  try {
    certificate = new Crypto.X509Certificate(cert)
  } catch {
    return configError("tls.cert", "tls.cert is not a PEM or DER certificate")
  }
  const now = Date.now()
  if (Date.parse(certificate.validTo) < now) {
    return configError("tls.cert", `the client certificate (tls.cert) expired on ${certificate.validTo}; renew it`)
  }
  if (Date.parse(certificate.validFrom) > now) {
    return configError("tls.cert", `the client certificate (tls.cert) is not valid before ${certificate.validFrom}`)
  }
  return undefined
}

/**
 * Reads the `…File` options into `ca`/`cert`/`key` and checks the client certificate and key.
 *
 * @internal
 */
export const checkTls = (options: TlsOptions): Effect.Effect<Tls.ConnectionOptions, RedisError> =>
  Effect.suspend(() => {
    const { caFile, certFile, keyFile, ...rest } = options
    const resolved: Tls.ConnectionOptions = { ...rest }
    const files = [
      ["ca", "tls.caFile", caFile],
      ["cert", "tls.certFile", certFile],
      ["key", "tls.keyFile", keyFile]
    ] as const
    for (const [key, field, path] of files) {
      if (path === undefined) continue
      const content = readFile(field, path)
      if (content instanceof RedisError) return Effect.fail(content)
      resolved[key] = content
    }
    const cert = first(resolved.cert)
    const key = first(resolved.key as Tls.ConnectionOptions["cert"])
    if ((cert === undefined) !== (key === undefined)) {
      return Effect.fail(
        configError(
          cert === undefined ? "tls.cert" : "tls.key",
          "mutual TLS needs both a client certificate (tls.cert/certFile) and its key (tls.key/keyFile)"
        )
      )
    }
    if (cert !== undefined && key !== undefined) {
      const dates = checkDates(cert)
      if (dates !== undefined) return Effect.fail(dates)
      try {
        NodeTls.createSecureContext({ cert, key, passphrase: resolved.passphrase })
      } catch (cause) {
        const mismatch = /key values mismatch/i.test(String((cause as Error).message))
        return Effect.fail(
          configError(
            "tls.key",
            mismatch
              ? "the private key (tls.key) does not match the client certificate (tls.cert)"
              : "the private key (tls.key) cannot be read: not a PEM key, or a wrong passphrase"
          )
        )
      }
    }
    if (resolved.ca !== undefined) {
      try {
        NodeTls.createSecureContext({ ca: resolved.ca })
      } catch {
        return Effect.fail(configError("tls.ca", "tls.ca holds no readable PEM certificate"))
      }
    }
    return Effect.succeed(resolved)
  })
