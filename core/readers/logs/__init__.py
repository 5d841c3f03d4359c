"""Reading application logs (any size, any encoding) and diagnosing them."""
