import net from 'node:net'

/**
 * A real TCP endpoint on loopback that accepts connections and never answers (a blackholed
 * store endpoint), or, as a proxy in front of `target`, one that forwards until `hold()` and
 * from then on swallows what it is sent, until `lift()`. `close` ends every connection.
 */
export const blackhole = async (target?: { host: string, port: number }) => {
  const sockets = new Set<net.Socket>()
  let holding = target === undefined
  /** Connections that sent something while held: they are cut when the hold is lifted. */
  const held = new Set<net.Socket>()
  let heldOne = (): void => {}
  const someHeld = new Promise<void>((resolve) => { heldOne = resolve })
  const server = net.createServer((client) => {
    sockets.add(client)
    client.on('close', () => { sockets.delete(client) })
    client.on('error', () => {})
    const upstream = target === undefined ? undefined : net.connect(target.port, target.host)
    if (upstream !== undefined) {
      sockets.add(upstream)
      upstream.on('error', () => { client.destroy() })
      upstream.on('close', () => { sockets.delete(upstream); client.destroy() })
      upstream.on('data', (chunk: Buffer) => { if (!held.has(client)) client.write(chunk) })
      client.on('close', () => { upstream.destroy() })
    }
    client.on('data', (chunk: Buffer) => {
      if (holding || held.has(client)) {
        held.add(client)
        heldOne()
      } else upstream?.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    /** From now on, nothing sent is answered. */
    hold: () => { holding = true },
    /** Answers again, on new connections: the ones that were held are cut. */
    lift: () => {
      holding = false
      for (const socket of held) socket.destroy()
      held.clear()
    },
    /** How many requests went unanswered since the hold began. */
    heldCount: () => held.size,
    /** Resolves once something sent has gone unanswered: a client is waiting on this endpoint. */
    unanswered: async () => { await someHeld },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}

/** A loopback port nothing listens on (a Redis server that is down). */
export const closedPort = async (): Promise<number> => {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => { resolve() }))
  return port
}
