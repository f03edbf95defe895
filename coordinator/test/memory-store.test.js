import { MemoryStore } from '../src/store/memory-store.js'
import { storeContract } from './store-contract.js'

storeContract('MemoryStore', async () => new MemoryStore())
