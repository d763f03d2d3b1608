import { defineTopic, InvalidTopicError } from '../../lib';

describe('defineTopic', () => {
  it('is the topic name itself at runtime', () => {
    const topic = defineTopic<{ orderId: string }>('order.created');
    expect(topic).toBe('order.created');
    expect(typeof topic).toBe('string');
  });

  it('checks the name at once', () => {
    expect(() => defineTopic('not valid')).toThrow(InvalidTopicError);
    expect(() => defineTopic('')).toThrow('Invalid topic "": use 1-200 characters of A-Z a-z 0-9 . _ - :');
  });
});
