/**
 * Bull Board's actions (pause, retry, clean, ...) are mostly PUTs and DELETEs without a body, which
 * its HTTP client sends without a Content-Type; Kairos accepts state-changing requests only as
 * application/json. This script, added to the board's page, labels them so before they leave.
 */
import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { PublicRoute } from '@kairos/process';

export const BOARD_REQUESTS_SCRIPT_PATH = '/admin/board-requests.js';

const SCRIPT = `(function () {
  var open = XMLHttpRequest.prototype.open;
  var setHeader = XMLHttpRequest.prototype.setRequestHeader;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method) {
    this.kairosWrite = !/^(GET|HEAD|OPTIONS)$/i.test(method);
    this.kairosTyped = false;
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.setRequestHeader = function (name) {
    if (String(name).toLowerCase() === 'content-type') this.kairosTyped = true;
    return setHeader.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.kairosWrite && !this.kairosTyped) setHeader.call(this, 'Content-Type', 'application/json');
    return send.apply(this, arguments);
  };
})();
`;

@Controller()
@PublicRoute()
export class BoardRequestsController {
  @Get(BOARD_REQUESTS_SCRIPT_PATH.slice(1))
  script(@Res() res: Response): void {
    res.type('text/javascript').send(SCRIPT);
  }
}
