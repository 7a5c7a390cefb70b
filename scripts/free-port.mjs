import { createServer } from 'node:net'

/** A TCP port free on the loopback interface now, for a server the tests or the demo start. */
export const freePort = () => new Promise((resolve, reject) => {
  const server = createServer()
  server.unref()
  server.on('error', reject)
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    server.close(() => resolve(port))
  })
})
