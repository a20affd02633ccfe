/** The deliveries of ended orchestrations: signed CloudEvents, a gate per receiver's origin, and circuits shared by the instances. */
export { CircuitRecords } from './circuitRecords';
export { deliveriesOf, notConfigured } from './notificationDispatcher';
export { NotificationSender, deliveryPool, postDelivery } from './notificationSender';
export type { CloudEvent } from './notificationSender';
