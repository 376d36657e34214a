import Latchkey
