// The protected-resource metadata (RFC 9728) of /mcp, for hosts that discover
// how to authenticate: a bearer token in the Authorization header. Palai's
// tokens are project API keys its operator issues (`palai keys create`), not
// OAuth grants, so no authorization server is named.
import express, { type Request, type Response, type Router } from 'express';

export function protectedResourceRouter(): Router {
  const router = express.Router();
  const serve = (req: Request, res: Response) => {
    const origin = `${req.protocol}://${req.get('host')}`;
    res.setHeader('Cache-Control', 'no-cache');
    res.json({
      resource: `${origin}/mcp`,
      bearer_methods_supported: ['header'],
      resource_name: 'Palai MCP server',
    });
  };
  // RFC 9728 puts the resource's path after the well-known name; the bare name serves the same document.
  router.get('/mcp', serve);
  router.get('/', serve);
  return router;
}
