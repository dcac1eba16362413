import { readFileSync } from 'node:fs'
const { protobufFrames } = await import('./targets/protobuf-frames.ts')
const s = await protobufFrames.open()
const input = new Uint8Array(readFileSync(process.argv[2]!))
await s.run(input).catch((e) => console.log(e.message, '\n', e.cause?.stack))
