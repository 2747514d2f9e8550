// Receives Kairos HTTP-target deliveries and checks their signature before acting on them; runs until stopped.
import express from 'express';
import { verifySignature } from '@kairos/sdk';

const secret = process.env.KAIROS_SIGNING_SECRET; // the namespace's signing secret: `kairos signing-secret show`
const app = express();

// The signature covers the raw bytes: read the body as text, parse it only after the check.
app.post('/hooks/kairos', express.text({ type: 'application/json' }), (req, res) => {
  const check = verifySignature({ secret, header: req.get('kairos-signature'), body: req.body });
  if (!check.valid) return res.status(401).json({ error: check.reason });
  const delivery = JSON.parse(req.body);
  console.log(`run ${delivery.runId} attempt ${delivery.attempt}`, delivery.payload);
  res.json({ received: true }); // any 2xx succeeds the run; 5xx, 408 and 429 are retried
});

const server = app.listen(Number(process.env.PORT ?? 4000), () => console.log(`listening on port ${server.address().port}: POST /hooks/kairos`));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close());
