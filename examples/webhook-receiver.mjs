// Receives Kairos HTTP-target deliveries and checks their signature before acting on them.
import express from 'express';
import { verifySignature } from '@kairos/sdk';

const secret = process.env.KAIROS_SIGNING_SECRET; // the namespace's signing secret
const app = express();

// The signature covers the raw bytes: read the body as text, parse it only after the check.
app.post('/hooks/kairos', express.text({ type: 'application/json' }), (req, res) => {
  const check = verifySignature({ secret, header: req.get('kairos-signature'), body: req.body });
  if (!check.valid) return res.status(401).json({ error: check.reason });
  const delivery = JSON.parse(req.body);
  console.log(`run ${delivery.runId} attempt ${delivery.attempt}`, delivery.payload);
  res.json({ received: true }); // any 2xx succeeds the run; 5xx, 408 and 429 are retried
});

app.listen(Number(process.env.PORT ?? 4000));
